"""Options and parameter types more than one command takes, each defined once.

``with_operator`` gives a command the stack options (``--stack``, ``--endpoint-url``,
``--region``, ``--profile``) and calls it with the connected ``Operator`` in their place.
"""

from __future__ import annotations

import functools
import pkgutil
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, TypeVar

import click

if TYPE_CHECKING:
    from datetime import datetime

    # Named in the quoted base classes below (ruff does not see those).
    from richdoc.jobs import JobStatus  # noqa: F401
    from richdoc.taxonomy import FailureKind  # noqa: F401
    from richdoc_tools.local.faults.injected import FaultSettings

Command = Callable[..., int]
E = TypeVar("E", bound=StrEnum)

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
        from richdoc_tools.ops.operator import Operator

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


class Since(click.ParamType["datetime", str]):
    """A moment: an ISO 8601 date or time (UTC unless it says otherwise), or a duration
    ago: ``90m``, ``24h``, ``7d``."""

    name = "time"
    _UNITS: ClassVar[dict[str, int]] = {"m": 60, "h": 3600, "d": 86400}

    def convert(
        self, value: datetime | str, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        from datetime import UTC, datetime, timedelta

        if isinstance(value, datetime):
            return value
        text = value.strip()
        unit = self._UNITS.get(text[-1:].lower())
        if unit is not None and text[:-1].isdigit():
            return datetime.now(UTC) - timedelta(seconds=int(text[:-1]) * unit)
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"not a date, a time or a duration like 24h: {value!r}", param, ctx)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Rate(click.ParamType[float, str]):
    """Sends a second: ``N`` or ``N/s`` (``N/m`` a minute)."""

    name = "rate"

    def convert(
        self, value: float | str, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        number, _, per = value.strip().partition("/")
        seconds = {"": 1.0, "s": 1.0, "m": 60.0}.get(per.strip().lower())
        try:
            rate = float(number)
        except ValueError:
            rate = float("nan")
        if seconds is None or not rate > 0:  # also refuses nan
            self.fail(f"not a rate like 10/s or 60/m: {value!r}", param, ctx)
        return rate / seconds


class Faults(click.ParamType["FaultSettings", str]):
    """``RATE[,seed=N]``: inject faults at RATE (0 to 1), decided by seed N."""

    name = "faults"

    def convert(
        self, value: FaultSettings | str, param: click.Parameter | None, ctx: click.Context | None
    ) -> FaultSettings:
        from richdoc_tools.local.faults.injected import FaultSettings, FaultsUsageError

        if isinstance(value, FaultSettings):
            return value
        try:
            return FaultSettings.parse(value)
        except FaultsUsageError as exc:
            self.fail(f"{exc}; expected RATE[,seed=N], e.g. 0.05,seed=7", param, ctx)


def embedded_stack_options(command: Command) -> Command:
    """``--lenient``, ``--faults RATE[,seed=N]`` and ``--parameter-overrides KEY=VALUE``
    for a command that starts the embedded stack (docs/embedded-stack.md)."""
    command = click.option(
        "--parameter-overrides",
        "parameter_overrides",
        multiple=True,
        metavar="KEY=VALUE",
        help="template parameter values, as sam deploy takes them: repeat the option, or "
        "quote several ('MaxRunningJobs=1 TenantKey=richdoc-tenant')",
    )(command)
    command = click.option(
        "--faults",
        type=Faults(),
        default=None,
        metavar="RATE[,seed=N]",
        help="inject AWS faults (throttles, 5xx, Lambda crashes, lost invocations) at RATE, "
        "reproducibly for seed N (default 0)",
    )(command)
    return click.option(
        "--lenient",
        is_flag=True,
        help="turn off what the embedded stack enforces as AWS does (IAM per function, "
        "transaction conflicts, validations): for debugging only",
    )(command)


class _EnumChoice(click.ParamType[E, str]):
    """One member of the enum ``ENUM`` (``"module:Name"``), imported only when the option
    is given or its help shown."""

    ENUM: ClassVar[str]

    def _members(self) -> type[E]:
        members: type[E] = pkgutil.resolve_name(self.ENUM)
        return members

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "[" + "|".join(self._members()) + "]"

    def convert(
        self, value: E | str, param: click.Parameter | None, ctx: click.Context | None
    ) -> E:
        members = self._members()
        try:
            return members(value)
        except ValueError:
            choices = ", ".join(repr(str(member)) for member in members)
            self.fail(f"{value!r} is not one of {choices}.", param, ctx)


class FailureKindChoice(_EnumChoice["FailureKind"]):
    """A failure kind (``richdoc.taxonomy.FailureKind``)."""

    name = "kind"
    ENUM = "richdoc.taxonomy:FailureKind"


class JobStatusChoice(_EnumChoice["JobStatus"]):
    """A job status, one of ``JobStatus``. The enum is imported only when the option is
    given or its help shown: its module brings boto3, which would make every other
    command start several times slower (docs/architecture.md, "The command line")."""

    name = "status"
    ENUM = "richdoc.jobs:JobStatus"
