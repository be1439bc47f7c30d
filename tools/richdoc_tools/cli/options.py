"""Options and parameter types more than one command takes, each defined once.

``with_operator`` gives a command the stack options (``--stack``, ``--endpoint-url``,
``--region``, ``--profile``) and calls it with the connected ``Operator`` in their place.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from richdoc.jobs import JobStatus

Command = Callable[..., int]

_WHERE_OPTIONS = (
    click.option(
        "--endpoint-url",
        default=None,
        metavar="URL",
        help="AWS endpoint, e.g. http://127.0.0.1:4566 for richdoc local serve",
    ),
    click.option(
        "--region", default=None, metavar="REGION", help="defaults to the usual AWS settings"
    ),
    click.option("--profile", default=None, metavar="PROFILE", help="AWS profile"),
)


def stack_options(
    stack_default: str | None = "richdoc",
    stack_help: str = "CloudFormation stack name (default: richdoc)",
) -> Callable[[Command], Command]:
    """``--stack``, ``--endpoint-url``, ``--region``, ``--profile``, in that order in help."""
    stack = click.option("--stack", default=stack_default, metavar="NAME", help=stack_help)

    def add(command: Command) -> Command:
        for option in reversed((stack, *_WHERE_OPTIONS)):
            command = option(command)
        return command

    return add


def with_operator(command: Callable[..., int]) -> Command:
    """Add the stack options; the command gets the ``Operator`` of that stack as its first
    argument (``def cmd(operator: Operator, ...)``)."""

    @functools.wraps(command)
    def connected(
        *,
        stack: str,
        endpoint_url: str | None,
        region: str | None,
        profile: str | None,
        **options: object,
    ) -> int:
        from richdoc_tools.operator import Operator

        operator = Operator.connect(
            stack, endpoint_url=endpoint_url, region=region, profile=profile
        )
        return command(operator, **options)

    return stack_options()(connected)


def json_option(help: str = "print JSON instead of a table") -> Callable[[Command], Command]:
    return click.option("--json", "as_json", is_flag=True, help=help)


def example(*lines: str) -> str:
    """A command's epilog: its example, kept as written (click rewraps other text)."""
    return "\b\nexample: " + "\n  ".join(lines)


class PositiveSeconds(click.ParamType[float, str]):
    name = "seconds"

    def convert(
        self, value: float | str, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            seconds = float(value)
        except ValueError:
            self.fail(f"not a number of seconds: {value!r}", param, ctx)
        if not seconds > 0:  # also refuses nan
            self.fail(f"must be more than 0 seconds: {value!r}", param, ctx)
        return seconds


class JobStatusChoice(click.ParamType["JobStatus", str]):
    """A job status, one of ``JobStatus``. The enum is imported only when the option is
    given or its help shown: its module brings boto3, which would make every other
    command start several times slower (docs/architecture.md, "The command line")."""

    name = "status"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        from richdoc.jobs import JobStatus

        return "[" + "|".join(JobStatus) + "]"

    def convert(
        self, value: JobStatus | str, param: click.Parameter | None, ctx: click.Context | None
    ) -> JobStatus:
        from richdoc.jobs import JobStatus

        try:
            return JobStatus(value)
        except ValueError:
            choices = ", ".join(repr(str(status)) for status in JobStatus)
            self.fail(f"{value!r} is not one of {choices}.", param, ctx)
