"""The published JSON Schemas (schemas/): generated from the models, committed, and met by
every golden output; they refuse what the contract refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from richdoc_client.schemas import PUBLISHED, Published, schema_bytes
from scripts.generate_schemas import main as generate
from tests.support.consumer_examples import CONSUMERS
from tests.support.paths import DATA
from tests.support.published_schemas import SCHEMAS
from tests.support.published_schemas import schema_errors as _errors


def _documents(pattern: str) -> list[Path]:
    return sorted(DATA.rglob(pattern))


@pytest.mark.parametrize("published", PUBLISHED, ids=lambda p: p.name)
def test_the_committed_schema_is_what_the_models_generate(published: Published):
    assert (SCHEMAS / published.file_name).read_bytes() == schema_bytes(published)
    Draft202012Validator.check_schema(json.loads(schema_bytes(published)))


def test_schemas_holds_exactly_the_published_schemas_and_the_check_passes(capsys):
    assert sorted(p.name for p in SCHEMAS.iterdir()) == sorted(p.file_name for p in PUBLISHED)
    assert generate(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


PROJECTIONS = _documents("*projection.json")
DETECTIONS = _documents("*detection.json")
CHUNKS = _documents("chunks*.jsonl")


def test_the_corpus_has_every_kind_of_golden_output():
    assert len(PROJECTIONS) >= 27 and len(DETECTIONS) >= 9 and len(CHUNKS) >= 26


@pytest.mark.parametrize("path", PROJECTIONS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_golden_projection_meets_its_schema(path: Path):
    assert _errors("projection", json.loads(path.read_bytes())) == []


@pytest.mark.parametrize("path", DETECTIONS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_golden_detection_meets_its_schema(path: Path):
    assert _errors("detection", json.loads(path.read_bytes())) == []


@pytest.mark.parametrize("path", CHUNKS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_golden_chunk_line_meets_its_schema(path: Path):
    for line in path.read_text().splitlines():
        assert _errors("chunk", json.loads(line)) == []


@pytest.mark.parametrize("path", sorted(CONSUMERS.glob("*.json")), ids=lambda p: p.name)
def test_every_example_manifest_and_event_meets_its_schema(path: Path):
    assert _errors(path.name.split("-")[0], json.loads(path.read_bytes())) == []


def _golden_projection() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (DATA / "golden" / "pages_bbox" / "projection.json").read_bytes()
    )
    return data


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p["nodes"][1]["props"].update(text="a section has a title, not a text"),
        lambda p: p["nodes"][1].update(label="CHAPTER"),
        lambda p: p["nodes"][1].pop("label"),
        lambda p: p["nodes"][1]["props"].update(page=None),  # absent, never null
        lambda p: p["nodes"][1]["props"].update(bbox=[1, 2, 3]),
        lambda p: p["nodes"][0]["props"].pop("name"),
        lambda p: p["stats"].pop("warnings"),
        lambda p: p["spans"][0].update(kind="sentence"),
        lambda p: p.update(schema="richdoc.projection/v2"),
        lambda p: p.update(extra=True),
    ],
    ids=[
        "props-of-another-label",
        "unknown-label",
        "no-label",
        "null-page",
        "short-bbox",
        "document-without-name",
        "stats-without-warnings",
        "unknown-span-kind",
        "another-version",
        "unknown-member",
    ],
)
def test_the_projection_schema_refuses_what_the_contract_refuses(damage):
    projection = _golden_projection()
    damage(projection)
    assert _errors("projection", projection) != []


def test_the_detection_schema_requires_the_document_node_and_at_most_one_ambiguity():
    detection = json.loads((DATA / "golden_detection" / "price-notice.detection.json").read_bytes())
    assert _errors("detection", detection) == []
    wrong_node = json.loads(json.dumps(detection))
    wrong_node["ambiguities"][0]["nodeRef"] = 3
    assert _errors("detection", wrong_node) != []
    two = {**detection, "ambiguities": detection["ambiguities"] * 2}
    assert _errors("detection", two) != []


def test_the_event_schema_requires_every_member_and_refuses_text():
    event = json.loads((CONSUMERS / "event-succeeded.json").read_bytes())
    for member in list(event):
        assert _errors("event", {k: v for k, v in event.items() if k != member}) != [], member
    assert _errors("event", {**event, "canonical_text": "the document"}) != []
