"""The published JSON Schemas (schemas/): generated from the models, committed, and met by
every golden output; they refuse what the contract refuses and accept what a later minor
version may add; every release is kept and none breaks the evolution rule."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from richdoc_client.schemas import PUBLISHED, RELEASED, Published, schema_bytes
from richdoc_client.versions import MAJOR, minor
from scripts.generate_schemas import main as generate
from tests.support.consumer_examples import CONSUMERS
from tests.support.paths import DATA
from tests.support.published_schemas import SCHEMAS
from tests.support.published_schemas import schema_errors as _errors
from tests.support.schema_evolution import breaking_changes


def _documents(pattern: str) -> list[Path]:
    return sorted(DATA.rglob(pattern))


@pytest.mark.parametrize("published", PUBLISHED, ids=lambda p: p.name)
def test_the_committed_schema_is_what_the_models_generate(published: Published):
    assert (SCHEMAS / published.file_name).read_bytes() == schema_bytes(published)
    Draft202012Validator.check_schema(json.loads(schema_bytes(published)))


def test_schemas_holds_exactly_the_published_schemas_and_the_check_passes(capsys):
    current = sorted(p.name for p in SCHEMAS.iterdir() if p.is_file())
    assert current == sorted(p.file_name for p in PUBLISHED)
    assert generate(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def _releases(name: str) -> list[Path]:
    """The released schemas of one published document, oldest first."""
    found = (SCHEMAS / RELEASED).glob(f"{name}-{MAJOR}.*.schema.json")
    return sorted(found, key=lambda p: minor(p.name.removeprefix(f"{name}-").split(".s")[0]))


@pytest.mark.parametrize("published", PUBLISHED, ids=lambda p: p.name)
def test_the_current_version_is_released_and_no_release_breaks_an_earlier_one(
    published: Published,
):
    releases = _releases(published.name)
    assert releases[0].name == f"{published.name}-{MAJOR}.0.schema.json"
    assert releases[-1].name == published.released_name
    assert releases[-1].read_bytes() == schema_bytes(published)
    for older, newer in itertools.pairwise(releases):
        old, new = json.loads(older.read_bytes()), json.loads(newer.read_bytes())
        assert breaking_changes(old, new) == [], f"{older.name} -> {newer.name}"


def test_a_model_changed_without_a_new_version_is_refused(monkeypatch, capsys, tmp_path):
    """make schemas will not rewrite a release: the change needs a version of its own."""
    import scripts.generate_schemas as script

    released = tmp_path / RELEASED
    released.mkdir()
    for published in PUBLISHED:
        (tmp_path / published.file_name).write_bytes(schema_bytes(published))
        (released / published.released_name).write_bytes(b'{"changed": true}\n')
    monkeypatch.setattr(script, "SCHEMAS", tmp_path)
    assert generate([]) == 1
    assert "the released schema projection 1.1 would change" in capsys.readouterr().err
    assert (released / "projection-1.1.schema.json").read_bytes() == b'{"changed": true}\n'


def _manifest_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / "manifest.v1.schema.json").read_bytes())
    return schema


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (lambda s: s["properties"].pop("metadata"), "$.metadata: removed"),
        (lambda s: s["properties"]["run"].update(type="string"), "$.run: retyped"),
        (
            lambda s: s["$defs"]["ResultCounts"]["properties"].pop("nodes"),
            "$.result|0.counts.nodes: removed",
        ),
        (lambda s: s["required"].append("schema_version"), "$.schema_version: required"),
        (
            lambda s: (
                s["properties"].update(extra={"type": "string"}),
                s["required"].append("extra"),
            ),
            "$.extra: required",
        ),
        (
            lambda s: s["properties"]["status"].update(enum=["SUCCEEDED", "DEAD_LETTERED"]),
            "$.status: its vocabulary changed",
        ),
        (
            lambda s: s["properties"]["status"]["enum"].append("ARCHIVED"),
            "$.status: its vocabulary changed",
        ),
        (lambda s: s.update(additionalProperties=False), "$: refuses unknown members"),
    ],
    ids=[
        "removed",
        "retyped",
        "removed-inside",
        "made-required",
        "new-required",
        "narrowed-vocabulary",
        "widened-vocabulary",
        "closed",
    ],
)
def test_the_evolution_check_finds_each_kind_of_breaking_change(change, found):
    schema = _manifest_schema()
    changed = json.loads(json.dumps(schema))
    change(changed)
    assert any(found in problem for problem in breaking_changes(schema, changed)), breaking_changes(
        schema, changed
    )


def test_an_added_optional_member_is_a_minor_change():
    schema = _manifest_schema()
    added = json.loads(json.dumps(schema))
    added["properties"]["ocr"] = {"type": "boolean", "x-richdoc-since": "1.2"}
    added["$defs"]["ResultKeys"]["properties"]["summary_key"] = {"type": "string"}
    assert breaking_changes(schema, added) == []


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
        lambda p: p["nodes"][1]["props"].pop("title"),
        lambda p: p["nodes"][1].update(label="CHAPTER"),
        lambda p: p["nodes"][1].pop("label"),
        lambda p: p["nodes"][1]["props"].update(page=None),  # absent, never null
        lambda p: p["nodes"][1]["props"].update(bbox=[1, 2, 3]),
        lambda p: p["nodes"][0]["props"].pop("name"),
        lambda p: p["stats"].pop("warnings"),
        lambda p: p["spans"][0].update(kind="sentence"),
        lambda p: p.update(schema="richdoc.projection/v2"),
        lambda p: p.update(schema_version="2.0"),
    ],
    ids=[
        "section-without-title",
        "unknown-label",
        "no-label",
        "null-page",
        "short-bbox",
        "document-without-name",
        "stats-without-warnings",
        "unknown-span-kind",
        "another-major-version",
        "version-of-another-major",
    ],
)
def test_the_projection_schema_refuses_what_the_contract_refuses(damage):
    projection = _golden_projection()
    damage(projection)
    assert _errors("projection", projection) != []


def test_the_schemas_accept_members_a_later_minor_version_may_add():
    projection = _golden_projection()
    projection["ocr"] = {"engine": "tesseract"}
    projection["nodes"][1]["props"]["confidence"] = 0.9
    projection["schema_version"] = "1.7"
    assert _errors("projection", projection) == []
    event = json.loads((CONSUMERS / "event-succeeded.json").read_bytes())
    event["outputs"]["summary_key"] = "documents/x/y/run-001/summary.txt"
    assert _errors("event", event) == []


def test_a_document_written_before_versions_meets_the_current_schema():
    for name in ("manifest-current", "event-succeeded"):
        document = json.loads((CONSUMERS / f"{name}.json").read_bytes())
        for member in ("schema_version", "current", "manifest"):
            document.pop(member, None)
        result = document.get("result", document)
        for member in ("markdown_key", "tables_prefix"):  # since 1.1 too
            del result["outputs"][member]
        del result["counts"]["tables"]
        assert _errors(name.split("-")[0], document) == []


def test_the_detection_schema_requires_the_document_node_and_at_most_one_ambiguity():
    detection = json.loads((DATA / "golden_detection" / "price-notice.detection.json").read_bytes())
    assert _errors("detection", detection) == []
    wrong_node = json.loads(json.dumps(detection))
    wrong_node["ambiguities"][0]["nodeRef"] = 3
    assert _errors("detection", wrong_node) != []
    two = {**detection, "ambiguities": detection["ambiguities"] * 2}
    assert _errors("detection", two) != []


def test_the_event_schema_requires_every_member_of_its_first_release():
    event = json.loads((CONSUMERS / "event-succeeded.json").read_bytes())
    added = {"schema_version", "current", "manifest"}  # since 1.1: events before lack them
    for member in set(event) - added:
        assert _errors("event", {k: v for k, v in event.items() if k != member}) != [], member
