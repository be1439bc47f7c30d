"""Invariants of the chunks of any projection: spans slice the canonical text, every
block byte is in exactly one chunk, order, size limit, unique ids, exact heading paths."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from richdoc_client.chunking import MIN_MAX_BYTES, build_chunks
from richdoc_client.projection import SectionNode
from tests.support.outline_projection import Block, Heading, Paragraph, Table, outline

_TEXT = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\r"), min_size=1, max_size=300
).filter(str.strip)
_WORDS = (
    st.lists(
        st.sampled_from(["a", "ab", "é", "日本", "🎉", "word", " ", "\n"]), min_size=1, max_size=120
    )
    .map("".join)
    .filter(str.strip)
)
_BLOCK: st.SearchStrategy[Block] = st.one_of(
    st.builds(Heading, st.integers(0, 4), _TEXT),
    st.builds(Paragraph, st.one_of(_TEXT, _WORDS), st.none() | st.integers(1, 3)),
    st.builds(
        Table,
        st.just(("k", "v")),
        st.lists(st.tuples(_WORDS, _TEXT), min_size=1, max_size=4).map(tuple),
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_BLOCK, max_size=12), st.integers(MIN_MAX_BYTES, 400))
def test_chunks_tile_every_block_in_order_within_the_limit(blocks, max_bytes):
    projection = outline(*blocks)
    data = projection.canonical_text.encode()
    chunks = build_chunks(projection, document_id="a" * 32, max_bytes=max_bytes)

    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert len({c.id for c in chunks}) == len(chunks)
    covered: list[tuple[int, int, int]] = []
    for chunk in chunks:
        assert chunk.text == data[chunk.start : chunk.end].decode()
        assert 0 < chunk.size <= max_bytes
        assert chunk.spans[0].start == chunk.start and chunk.spans[-1].end == chunk.end
        for before, after in pairwise(chunk.spans):
            assert data[before.end : after.start] == b"\n\n"
        for piece in chunk.spans:
            data[piece.start : piece.end].decode()  # whole characters only
            covered.append((piece.span, piece.start, piece.end))
        assert chunk.nodes == sorted(set(chunk.nodes))
        assert chunk.pages == sorted(set(chunk.pages))
    # Every block is covered once, in order, by pieces that tile it.
    for index, span in enumerate(projection.spans):
        pieces = [(start, end) for ref, start, end in covered if ref == index]
        assert pieces[0][0] == span.start and pieces[-1][1] == span.end
        assert all(a[1] == b[0] for a, b in pairwise(pieces))
    assert [ref for ref, _, _ in covered] == sorted(ref for ref, _, _ in covered)
    assert [start for _, start, _ in covered] == sorted(start for _, start, _ in covered)


@settings(max_examples=100, deadline=None)
@given(st.lists(_BLOCK, max_size=12))
def test_a_chunk_lies_in_the_sections_its_heading_path_names(blocks):
    projection = outline(*blocks)
    parent = {edge.dst: edge.src for edge in projection.edges}

    def path(node_id: int) -> list[str]:
        titles: list[str] = []
        current: int | None = node_id
        while current:
            node = projection.nodes[current]
            if isinstance(node, SectionNode):
                titles.append(node.props.title)
            current = parent.get(current)
        return titles[::-1]

    for chunk in build_chunks(projection, document_id="a" * 32):
        last = chunk.spans[-1].node
        assert chunk.heading_path == path(last)
        # Every earlier block is a heading of that path, or lies in the same section.
        for piece in chunk.spans[:-1]:
            node = projection.nodes[piece.node]
            inside = path(piece.node)
            assert inside == chunk.heading_path or (
                isinstance(node, SectionNode) and chunk.heading_path[: len(inside)] == inside
            )
