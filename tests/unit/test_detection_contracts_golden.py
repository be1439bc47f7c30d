"""Golden outputs of the contracts-v2 rule set, reproduced byte for byte through
``richdoc detect`` (its README says what each case shows and how to regenerate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from richdoc_tools.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_contracts"
CASES = sorted(p.name.removesuffix(".projection.json") for p in GOLDEN.glob("*.projection.json"))


def test_the_golden_contracts_show_every_kind_and_a_quiet_contract() -> None:
    kinds: set[str] = set()
    quiet = 0
    for case in CASES:
        expected = json.loads((GOLDEN / f"{case}.detection.json").read_bytes())
        assert expected["rules"] == "contracts-v2"
        kinds.update(a["kind"] for a in expected["ambiguities"])
        quiet += not expected["ambiguities"]
    assert {"conflicting_dates", "relative_date"} <= kinds
    assert quiet >= 3


@pytest.mark.parametrize("clarify", [True, False], ids=["clarify", "no-clarify"])
@pytest.mark.parametrize("case", CASES)
def test_cli_detect_reproduces_the_golden_file_byte_for_byte(
    case: str, clarify: bool, tmp_path: Path
) -> None:
    out = tmp_path / "detection.json"
    argv = ["detect", str(GOLDEN / f"{case}.projection.json"), "-o", str(out)]
    assert main([*argv, "--clarify"] if clarify else argv) == 0
    expected = GOLDEN / f"{case}{'' if clarify else '.no-clarify'}.detection.json"
    assert out.read_bytes() == expected.read_bytes()


@pytest.mark.parametrize("case", CASES)
def test_cli_explains_every_date_as_the_golden_file_does(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["detect", str(GOLDEN / f"{case}.projection.json"), "--explain", "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert explained == json.loads((GOLDEN / f"{case}.explain.json").read_bytes())
