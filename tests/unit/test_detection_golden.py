"""Golden detection.json files of the spec-v1 rule set, reproduced byte for byte through
``richdoc detect --rules spec-v1``.

Each ``<case>.projection.json`` under golden_detection/ has two expected outputs:
``<case>.detection.json`` (with --clarify) and ``<case>.no-clarify.detection.json``.
The expected files were produced by the CLI and checked by hand against docs/detection.md;
after an intended change, regenerate them with the same command and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from richdoc_tools.cli import main

from richdoc.detection import Detection

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_detection"
CASES = sorted(p.name.removesuffix(".projection.json") for p in GOLDEN.glob("*.projection.json"))


def test_the_golden_corpus_covers_every_kind_and_a_suppression():
    assert CASES == ["house-rules", "price-notice", "supply-agreement", "travel-memo"]
    kinds: set[str] = set()
    suppressed = 0
    for case in CASES:
        expected = json.loads((GOLDEN / f"{case}.detection.json").read_bytes())
        kinds.update(a["kind"] for a in expected["ambiguities"])
        suppressed += expected["stats"]["ambiguities_suppressed"]
    assert kinds == {"conflicting_dates", "relative_date", "undated"}
    assert suppressed > 0


@pytest.mark.parametrize("clarify", [True, False], ids=["clarify", "no-clarify"])
@pytest.mark.parametrize("case", CASES)
def test_cli_detect_reproduces_the_golden_file_byte_for_byte(case, clarify, tmp_path):
    out = tmp_path / "detection.json"
    argv = ["detect", str(GOLDEN / f"{case}.projection.json"), "--rules", "spec-v1", "-o", str(out)]
    assert main([*argv, "--clarify"] if clarify else argv) == 0
    expected = GOLDEN / f"{case}{'' if clarify else '.no-clarify'}.detection.json"
    assert out.read_bytes() == expected.read_bytes()
    assert Detection.model_validate_json(out.read_bytes()).to_json_bytes() == out.read_bytes()


def test_cli_detect_reports_a_corrupt_projection_with_the_taxonomy_exit_code(tmp_path, capsys):
    projection = json.loads((GOLDEN / "price-notice.projection.json").read_bytes())
    projection["spans"][0]["end"] = 10_000
    source = tmp_path / "projection.json"
    source.write_text(json.dumps(projection))
    assert main(["detect", str(source), "--clarify", "-o", str(tmp_path / "out.json")]) == 10
    failure = json.loads(capsys.readouterr().err)
    assert failure["kind"] == "corrupt_input"
    assert not (tmp_path / "out.json").exists()


def test_the_detect_step_reads_a_projection_the_next_deploy_wrote(tmp_path):
    """A rolling upgrade: a later minor version's projection (members this one does not
    know, at the top and inside nodes) is detected as its known members say, never
    dead-lettered as corrupt_input. The golden inputs themselves are 1.0 projections."""
    projection = json.loads((GOLDEN / "supply-agreement.projection.json").read_bytes())
    assert "schema_version" not in projection  # written before versions: read as 1.0
    projection["schema_version"] = "1.4"
    projection["ocr"] = {"engine": "tesseract", "pages": []}
    for node in projection["nodes"]:
        node["props"]["confidence"] = 0.99
    source = tmp_path / "projection.json"
    source.write_text(json.dumps(projection))
    out = tmp_path / "detection.json"
    argv = ["detect", str(source), "--clarify", "--rules", "spec-v1", "-o", str(out)]
    assert main(argv) == 0
    assert out.read_bytes() == (GOLDEN / "supply-agreement.detection.json").read_bytes()
