"""Retrieval chunks (richdoc_client.chunking): the golden chunks of the golden corpus,
and each rule of docs/consumers.md ("Chunks") on small outlines."""

from __future__ import annotations

import json

import pytest

from richdoc_client.chunking import DEFAULT_MAX_BYTES, MIN_MAX_BYTES, build_chunks, chunks_jsonl
from richdoc_client.chunks import Chunk
from tests.support.chunk_goldens import cases, expected_path, render
from tests.support.outline_projection import Heading, Paragraph, Table, outline

DOC = "0123456789abcdef0123456789abcdef"


def _texts(chunks: list[Chunk]) -> list[tuple[list[str], str]]:
    return [(chunk.heading_path, chunk.text) for chunk in chunks]


@pytest.mark.parametrize(("name", "max_bytes"), cases(), ids=[f"{n}-{m}" for n, m in cases()])
def test_golden_chunks_are_byte_stable(name, max_bytes):
    assert render(name, max_bytes) == expected_path(name, max_bytes).read_bytes()


def test_chunks_jsonl_is_one_chunk_per_line_and_reads_back():
    projection = outline(Heading(1, "A"), Paragraph("café"), Table(("k",), (("v",),)))
    chunks = build_chunks(projection, document_id=DOC)
    data = chunks_jsonl(chunks)
    lines = data.decode().splitlines()
    assert data.endswith(b"\n") and len(lines) == len(chunks) == 2
    assert [Chunk.model_validate_json(line) for line in lines] == chunks
    assert "café" in lines[0]  # UTF-8, not \\u escapes
    assert list(json.loads(lines[0])) == sorted(json.loads(lines[0]))
    assert chunks_jsonl([]) == b""


def test_a_chunk_holds_one_section_and_its_heading_path_is_exact():
    projection = outline(
        Heading(1, "Terms"),
        Paragraph("t1"),
        Heading(2, "Payment"),
        Paragraph("p1"),
        Paragraph("p2"),
        Heading(1, "Signatures"),
        Paragraph("s1"),
    )
    assert _texts(build_chunks(projection, document_id=DOC)) == [
        (["Terms"], "Terms\n\nt1"),
        (["Terms", "Payment"], "Payment\n\np1\n\np2"),
        (["Signatures"], "Signatures\n\ns1"),
    ]


def test_headings_without_content_of_their_own_stay_with_what_follows_inside_them():
    projection = outline(
        Heading(0, "Lease"), Heading(1, "Terms"), Paragraph("Rent"), Heading(1, "Empty"),
        Heading(1, "Last"),
    )  # fmt: skip
    assert _texts(build_chunks(projection, document_id=DOC)) == [
        (["Lease", "Terms"], "Lease\n\nTerms\n\nRent"),
        (["Lease", "Empty"], "Empty"),  # an empty section: its heading alone
        (["Lease", "Last"], "Last"),
    ]


def test_table_rows_stay_apart_from_prose_and_carry_their_columns():
    projection = outline(
        Paragraph("before"),
        Table(("Item", "Price"), (("Tea", "3.50"), ("Coffee", "4.20"))),
        Paragraph("after"),
    )
    chunks = build_chunks(projection, document_id=DOC)
    assert [c.text for c in chunks] == [
        "before",
        "Item: Tea | Price: 3.50\n\nItem: Coffee | Price: 4.20",
        "after",
    ]
    table = chunks[1].table
    assert table is not None and (table.node, table.columns, table.rows) == (
        2,
        ["Item", "Price"],
        [1, 2],
    )
    assert chunks[1].nodes == [2, 3, 4] and chunks[1].pages == [1]
    assert [(b.node, b.bbox) for b in chunks[1].boxes] == [(3, [0, 1, 9, 2]), (4, [0, 2, 9, 3])]
    assert chunks[0].table is None and chunks[2].table is None


def test_blocks_gather_until_the_size_limit_counting_the_separators():
    blocks = [Paragraph("x" * 30), Paragraph("y" * 30), Paragraph("z" * 30)]
    chunks = build_chunks(outline(*blocks), document_id=DOC, max_bytes=MIN_MAX_BYTES)
    # 30 + 2 + 30 = 62 fits in 64; a third block would make 94.
    assert [c.size for c in chunks] == [62, 30]
    assert [[s.span for s in c.spans] for c in chunks] == [[0, 1], [2]]


def test_a_block_over_the_limit_is_cut_after_whitespace_into_pieces_that_tile_it():
    text = " ".join(f"word{i:02d}" for i in range(30))  # 6 bytes a word, 209 bytes
    chunks = build_chunks(outline(Paragraph(text)), document_id=DOC, max_bytes=MIN_MAX_BYTES)
    assert "".join(c.text for c in chunks) == text
    assert all(c.size <= MIN_MAX_BYTES for c in chunks)
    assert all(c.text.endswith(" ") for c in chunks[:-1])  # cut after a space
    assert [(s.span, s.start, s.end) for c in chunks for s in c.spans] == [
        (0, c.start, c.end) for c in chunks
    ]


def test_a_cut_without_whitespace_falls_on_a_character_boundary():
    text = "é" * 100  # two bytes each, no whitespace: cut at 64 bytes, 32 characters
    chunks = build_chunks(outline(Paragraph(text)), document_id=DOC, max_bytes=MIN_MAX_BYTES)
    assert [c.text for c in chunks] == ["é" * 32, "é" * 32, "é" * 32, "é" * 4]
    assert [c.size for c in chunks] == [64, 64, 64, 8]


def test_ids_are_stable_for_the_same_content_at_the_same_place():
    before = outline(Heading(1, "A"), Paragraph("a"), Heading(1, "B"), Paragraph("b"))
    edited = outline(
        Heading(1, "A"), Paragraph("a, amended"), Heading(1, "B"), Paragraph("b")
    )  # fmt: skip
    first, again = (build_chunks(before, document_id=DOC) for _ in range(2))
    changed = build_chunks(edited, document_id=DOC)
    assert [c.id for c in first] == [c.id for c in again]
    assert first[0].id != changed[0].id  # its content changed
    assert first[1].id == changed[1].id  # section B is unchanged: the same id
    other = build_chunks(before, document_id="f" * 32)
    assert {c.id for c in first}.isdisjoint(c.id for c in other)  # another document


def test_the_same_text_twice_in_one_section_gets_two_ids():
    blocks = [Paragraph("same " * 10), Paragraph("same " * 10)]
    chunks = build_chunks(outline(*blocks), document_id=DOC, max_bytes=MIN_MAX_BYTES)
    assert [c.text for c in chunks] == ["same " * 10, "same " * 10]
    assert chunks[0].id != chunks[1].id


def test_the_empty_document_has_no_chunks():
    assert build_chunks(outline(), document_id=DOC) == []


def test_a_limit_below_the_minimum_is_refused():
    with pytest.raises(ValueError, match="at least 64"):
        build_chunks(outline(Paragraph("x")), document_id=DOC, max_bytes=MIN_MAX_BYTES - 1)
    assert DEFAULT_MAX_BYTES >= MIN_MAX_BYTES
