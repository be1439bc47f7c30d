"""The closed vocabularies a command prints are each named, value by value, where
docs/operations.md describes its output: a user who reads `execution: waiting` in
`richdoc jobs cancel --json` finds what it means."""

from __future__ import annotations

from enum import StrEnum

import pytest
from richdoc_tools.ops.cancel import CancelOutcome, ExecutionStop

from tests.support.paths import ROOT


def _section(heading: str) -> str:
    text = (ROOT / "docs" / "operations.md").read_text()
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize(
    ("heading", "vocabulary"),
    [("Cancelling jobs", CancelOutcome), ("Cancelling jobs", ExecutionStop)],
    ids=["cancel outcome", "cancel execution"],
)
def test_every_value_a_command_prints_is_named_where_its_output_is_described(
    heading: str, vocabulary: type[StrEnum]
) -> None:
    section = _section(heading)
    assert [value for value in vocabulary if f"`{value}`" not in section] == []
