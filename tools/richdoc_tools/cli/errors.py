"""Every exit code of the command line, decided in one place.

Commands return their result's code (0, or 1 when a job failed or was not found, or a
message ``dlq discard`` chose was not on the queue; 3 when ``jobs cancel``, ``jobs
redrive`` or ``dlq discard`` was refused: the job had already finished, is not one to run
again, or has moved on to a newer run; ``jobs watch`` its job's outcome:
``outcome_code``); what they raise is mapped here for all of them:

* ``UsageError`` (a bad argument found after parsing: a missing file, an unusable
  ``--out``): ``richdoc <command>: <message>`` on stderr, exit 2. click's own usage errors
  (a missing argument, a bad option value) also exit 2, with click's usage lines.
* ``PipelineError`` (a step command's document failed): its failure as one JSON line on
  stderr, exit with the taxonomy's code (10, 20, 30, 70, other transient).
* ``Failed`` (the command could not do its job and says why), AWS SDK errors and
  ``LookupError`` (no credentials, no such stack, endpoint down): the message on
  stderr, exit 1, never a traceback.
* Ctrl-C: 130; the reader of stdout went away (``| head``): 141; both quietly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from richdoc.jobs import Job

EXIT_FAILED = 1
EXIT_USAGE = 2
# A cancel, redrive or discard the job's state refused (it had already finished; it
# succeeded; it has moved on).
EXIT_REFUSED = 3
# `richdoc jobs watch` of a job that ended CANCELLED.
EXIT_CANCELLED = 4
# `richdoc jobs watch` of a job that ended DELETED (its source was deleted meanwhile).
EXIT_DELETED = 5
# A shell's codes for SIGINT and SIGPIPE.
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


class UsageError(Exception):
    """A bad argument found after parsing: exit 2. The message is printed as it is:
    user-controlled parts go in through ``richdoc_tools.terminal.visible``."""


class Failed(Exception):
    """The command could not do its job: exit 1. Each line of the message that does not
    start with a space is printed as ``richdoc <command>: <line>``; indented lines are
    details, printed as they are. User-controlled parts go in through ``visible``."""


def outcome_code(job: Job) -> int:
    """How a finished job exits ``richdoc jobs watch``: 0 when it succeeded, its failure
    kind's code when dead-lettered (10 corrupt_input, 20 unsupported_feature, 30
    resource_limit, 75 transient, 70 internal: as ``richdoc parse``), 4 when cancelled, 5
    when deleted."""
    from richdoc.jobs import JobStatus
    from richdoc.taxonomy import ERRORS_BY_KIND, FailureKind

    if job.status is JobStatus.SUCCEEDED:
        return 0
    if job.status is JobStatus.CANCELLED:
        return EXIT_CANCELLED
    if job.status is JobStatus.DELETED:
        return EXIT_DELETED
    kind = job.failure.kind if job.failure else FailureKind.INTERNAL
    return ERRORS_BY_KIND[kind].exit_code


def invoke(group: click.Group, argv: Sequence[str]) -> int:
    """Parse ``argv``, run the command it names and return the exit code.

    Like argparse (and click's standalone mode), ``--help``, ``--version`` and click's own
    usage errors end in ``SystemExit``; everything a command does ends in a returned code.
    """
    try:
        try:
            with group.make_context(group.name, list(argv)) as ctx:
                try:
                    code = group.invoke(ctx)
                except Exception as exc:
                    mapped = _exit_code_for(exc, f"{ctx.info_name} {ctx.invoked_subcommand}")
                    if mapped is None:
                        raise
                    return mapped
                if not isinstance(code, int):
                    raise TypeError(f"a command returned {code!r}, not an exit code")
                return code
        except click.exceptions.Exit as exc:  # --help, --version
            raise SystemExit(exc.exit_code) from None
        except click.ClickException as exc:
            exc.show()
            raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _stdout_closed()


def _exit_code_for(exc: Exception, prefix: str) -> int | None:
    """Print what ``exc`` means for the user and return the exit code; None for an
    exception that is not the user's to see (click's own, or a bug: its traceback helps)."""
    # Imported here: the mapped errors' modules (botocore, pydantic) cost more import time
    # than the whole command line, and a command that raises one has imported it already.
    from botocore.exceptions import BotoCoreError, ClientError

    from richdoc.taxonomy import PipelineError
    from richdoc_tools.terminal import visible

    if isinstance(exc, UsageError):
        print(f"{prefix}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(exc, PipelineError):
        print(exc.failure().to_json_line(), file=sys.stderr)
        return exc.exit_code
    if isinstance(exc, Failed):
        for line in str(exc).splitlines():
            print(line if line.startswith(" ") else f"{prefix}: {line}", file=sys.stderr)
        return EXIT_FAILED
    if isinstance(exc, BotoCoreError | ClientError | LookupError):
        # No credentials, no such stack, endpoint down: one line, not a traceback.
        print(f"{prefix}: {visible(exc)}", file=sys.stderr)
        return EXIT_FAILED
    return None


def _stdout_closed() -> int:
    """The reader of our output went away (``| head``): stop quietly, as Unix tools do.
    stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


T = TypeVar("T")


def resolving(action: Callable[[], T]) -> T:
    """``action()``, with an ambiguous job id prefix as a usage error."""
    from richdoc_tools.cli.render.jobs import ambiguous_job_id
    from richdoc_tools.ops.jobs import AmbiguousJobId

    try:
        return action()
    except AmbiguousJobId as exc:
        raise UsageError(ambiguous_job_id(exc)) from exc
