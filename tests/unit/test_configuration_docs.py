"""docs/configuration.md's table of the command line names every option of each command it
has a row for: a user who reads the row for `richdoc local serve` finds
`--parameter-overrides` there."""

from __future__ import annotations

import re

import click
import pytest
from richdoc_tools.cli.root import richdoc

from tests.support.paths import ROOT

# A row's first cell: `richdoc <command words> <ARGUMENTS...>`.
_ROW = re.compile(r"^\| `richdoc ((?:[a-z]+ ?)+)[^`]*` \| (.*) \|$")
# Rows that take the operator commands' stack options say so, and one row lists them.
_STACK_OPTIONS = "the stack options below"


def _rows() -> dict[str, str]:
    text = (ROOT / "docs" / "configuration.md").read_text()
    section = text.split("## CLI", 1)[1].split("\n## ", 1)[0]
    return {
        match[1].strip(): line
        for line in section.splitlines()
        if (match := _ROW.match(line)) and "/" not in match[1]
    }


def _command(words: str) -> click.Command:
    command: click.Command | None = richdoc
    for word in words.split():
        assert isinstance(command, click.Group), words
        command = command.get_command(click.Context(richdoc), word)
    assert command is not None, f"no command richdoc {words}"
    return command


ROWS = _rows()
STACK = {"--stack", "--endpoint-url", "--region", "--profile"}


def test_the_table_has_a_row_for_the_commands_that_start_a_stack() -> None:
    assert {"run", "local serve"} <= set(ROWS)


@pytest.mark.parametrize("words", sorted(ROWS))
def test_a_commands_row_names_every_option_it_takes(words: str) -> None:
    row = ROWS[words]
    missing = [
        option.opts[0]
        for option in _command(words).params
        if isinstance(option, click.Option)
        and "--help" not in option.opts
        and not any(
            re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", row) for name in option.opts
        )
        and not (_STACK_OPTIONS in row and STACK & set(option.opts))
    ]
    assert missing == [], f"docs/configuration.md's row for richdoc {words} lacks {missing}"
