"""The golden corpus (docs/projection.md): committed inputs give byte-identical projections.

``tests/data/golden/<name>/`` holds ``docling.json`` (the input), ``source.json`` and the
expected ``projection.json``; converted fixtures also hold the generated office file.
``python tests/support/gen_fixtures.py`` rebuilds all of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from richdoc.projection import load_docling, project
from richdoc_client.projection import ProjectionSource
from tests.support.gen_fixtures import (
    CONSTRUCTED,
    CONVERTED,
    GOLDEN,
    OCR_CONVERTED,
    docling_json,
)
from tests.support.paths import ROOT
from tests.support.projection_invariants import assert_graph_invariants, span_slice_audit

FIXTURES = sorted(path.name for path in GOLDEN.iterdir() if path.is_dir())


def _project_fixture(name: str) -> bytes:
    directory = GOLDEN / name
    source = ProjectionSource.model_validate_json((directory / "source.json").read_bytes())
    doc = load_docling((directory / "docling.json").read_bytes())
    return project(doc, source).to_json_bytes()


def test_corpus_has_every_fixture_the_generator_builds():
    assert set(FIXTURES) == set(CONSTRUCTED) | set(CONVERTED) | set(OCR_CONVERTED)
    assert len(FIXTURES) >= 8 + 4


@pytest.mark.parametrize("name", FIXTURES)
def test_golden_corpus_is_byte_stable(name):
    expected = (GOLDEN / name / "projection.json").read_bytes()
    assert _project_fixture(name) == expected


@pytest.mark.parametrize("name", sorted(CONSTRUCTED))
def test_constructed_fixture_rebuilds_to_the_committed_docling_json(name):
    assert docling_json(CONSTRUCTED[name]()) == (GOLDEN / name / "docling.json").read_bytes()


@pytest.mark.parametrize("name", FIXTURES)
def test_span_slice_audit_holds_for_every_span(name):
    projection = project(
        load_docling((GOLDEN / name / "docling.json").read_bytes()),
        ProjectionSource.model_validate_json((GOLDEN / name / "source.json").read_bytes()),
    )
    assert span_slice_audit(projection) == []
    assert_graph_invariants(projection)


def _golden(name: str) -> dict:
    return json.loads((GOLDEN / name / "projection.json").read_bytes())


def _list_items(projection: dict) -> list[tuple[str | None, str]]:
    return [
        (n["props"].get("marker"), n["props"]["text"])
        for n in projection["nodes"]
        if "list_level" in n["props"]
    ]


def test_docx_outline_numbering_reaches_the_canonical_text_as_word_renders_it():
    projection = _golden("docx_list_numbering")
    assert _list_items(projection) == [
        ("1.", "1. Scope of the services."),
        ("2.", "2. Payment."),
        ("2.1.", "2.1. Invoices are sent monthly."),
        ("2.2.", "2.2. Late payment."),
        ("2.2.1.", "2.2.1. Interest accrues from 1 April 2024."),
        ("3.", "3. Termination."),
        (None, "Unnumbered note"),  # a DOCX bullet: docling gives no marker
    ]
    text = projection["canonical_text"]
    assert text.index("2.2.1. Interest") < text.index("clause 2.2.1 is capped")


def test_an_html_ordered_list_with_a_start_keeps_its_numbers():
    # docling numbers an <ol> only when it has a start attribute: the nested one has none.
    assert _list_items(_golden("html_list_numbering")) == [
        ("42.", "42. The budget is approved."),
        ("43.", "43. The board meets quarterly."),
        (None, "First meeting in April."),
        (None, "Unnumbered remark"),
    ]


def test_a_table_nested_in_a_docx_cell_reaches_the_row_as_it_does_from_html():
    docx, html = _golden("docx_nested_table"), _golden("html_nested_table")
    details = "Loose leaf, by weight: Size Price Small 3.50 Large 4.20"
    rows = [n["props"] for n in docx["nodes"] if n["label"] == "TABLE_ROW"]
    assert rows[0]["cells"] == {"Item": "Tea", "Details": details}
    assert f"Item: Tea | Details: {details}" in docx["canonical_text"]
    assert [n["label"] for n in docx["nodes"]].count("TABLE") == 1
    # Everything but the DOCUMENT node's source name is the same from both formats.
    assert (docx["canonical_text"], docx["nodes"][1:], docx["spans"]) == (
        html["canonical_text"],
        html["nodes"][1:],
        html["spans"],
    )


_HASH_CORPUS = """
import hashlib, pathlib, sys
from richdoc_client.projection import ProjectionSource
from richdoc.projection import load_docling, project
digest = hashlib.sha256()
for directory in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    source = ProjectionSource.model_validate_json((directory / "source.json").read_bytes())
    doc = load_docling((directory / "docling.json").read_bytes())
    digest.update(project(doc, source).to_json_bytes())
print(digest.hexdigest())
"""


def test_determinism_hash_is_identical_across_processes_and_hash_seeds():
    layer = str(Path(__file__).resolve().parents[2] / "layers" / "docling")
    hashes = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": layer}
        result = subprocess.run(
            [sys.executable, "-c", _HASH_CORPUS, str(GOLDEN)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        hashes.append(result.stdout.strip())
    in_process = hashlib.sha256(b"".join(_project_fixture(name) for name in FIXTURES))
    assert hashes == [in_process.hexdigest()] * 2


@pytest.mark.docling
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONVERTED))
def test_regenerated_office_file_converts_to_the_committed_docling_json(name, tmp_path):
    from tests.support.gen_fixtures import convert

    file_name, make, _ = CONVERTED[name]
    raw = make()
    assert raw == (GOLDEN / name / file_name).read_bytes(), "the generator is not reproducible"
    # Convert under the committed name: docling records it in the document's origin.
    path = tmp_path / file_name
    path.write_bytes(raw)
    assert docling_json(convert(path)) == (GOLDEN / name / "docling.json").read_bytes()


@pytest.mark.docling
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OCR_CONVERTED))
def test_a_regenerated_scan_reads_as_the_committed_docling_json(name, tmp_path):
    """The same text on the same pages, with the same OCR record: the engine's boxes and
    confidences are floats its kernels compute, so bytes are not compared."""
    from richdoc.parse.ocr.record import document_record
    from tests.support.gen_fixtures import convert_with_ocr

    file_name, make, _ = OCR_CONVERTED[name]
    raw = make()
    assert raw == (GOLDEN / name / file_name).read_bytes(), "the generator is not reproducible"
    path = tmp_path / file_name
    path.write_bytes(raw)
    fresh = convert_with_ocr(path)
    committed = load_docling((GOLDEN / name / "docling.json").read_bytes())
    assert [(t.text, t.prov[0].page_no) for t in fresh.texts] == [
        (t.text, t.prov[0].page_no) for t in committed.texts
    ]
    assert document_record(fresh) == document_record(committed)


def test_the_worked_example_in_the_docs_is_the_real_output():
    page = (ROOT / "docs" / "projection.md").read_text(encoding="utf-8")
    block = page.split("<!-- example:projection.json -->\n```json\n", 1)[1].split("```", 1)[0]
    assert block.encode("utf-8") == (GOLDEN / "docs_example" / "projection.json").read_bytes()
    assert _project_fixture("docs_example") == block.encode("utf-8")
