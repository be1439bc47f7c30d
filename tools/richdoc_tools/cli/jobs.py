"""``richdoc jobs``: the job records of a stack (deployed, or ``richdoc local serve``).

A command here is one function: ``@jobs.command(...)`` and ``@with_operator``, which adds
the stack options and passes the stack's ``Operator``; what it prints is in ``render``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import EXIT_FAILED, UsageError
from richdoc_tools.cli.options import JobStatusChoice, example, json_option, with_operator

if TYPE_CHECKING:
    from richdoc.jobs import JobStatus
    from richdoc_tools.operator import Operator


@click.group(short_help="job records of a stack")
def jobs() -> None:
    """Job records of a stack."""


@jobs.command(
    "list",
    short_help="list jobs, optionally by status (uses the status index, no scan)",
    epilog=example("richdoc jobs list --status DEAD_LETTERED --stack richdoc"),
)
@click.option("--status", type=JobStatusChoice(), default=None)
@json_option()
@with_operator
def list_jobs(operator: Operator, status: JobStatus | None, as_json: bool) -> int:
    """List jobs, optionally by status (uses the status index, no scan)."""
    from richdoc_tools.cli import render

    render.jobs_list(operator.list_jobs(status), as_json=as_json)
    return 0


@jobs.command(
    short_help="one job with its attempts (tier, error, duration) and output keys",
    epilog=example("richdoc jobs show 4c7b41c722e6"),
)
@click.argument("job_id", metavar="JOB_ID")
@json_option()
@with_operator
def show(operator: Operator, job_id: str, as_json: bool) -> int:
    """Show one job. JOB_ID may be any unique prefix of the 32-character id (e.g. the 12
    characters `richdoc run` prints); a prefix several jobs share is a usage error (exit
    2) that lists them; no such job exits 1."""
    from richdoc_tools.cli import render
    from richdoc_tools.operator import AmbiguousJobId
    from richdoc_tools.terminal import visible

    try:
        found = operator.show_job(job_id)
    except AmbiguousJobId as exc:
        raise UsageError(render.ambiguous_job_id(exc)) from exc
    if found is None:
        print(f"richdoc jobs show: no job {visible(job_id)}", file=sys.stderr)
        return EXIT_FAILED
    job, attempts = found
    render.job_show(job, attempts, as_json=as_json)
    return 0


@jobs.command(
    short_help="delete a job and every artifact derived only from its source",
    epilog=example("richdoc jobs delete 4c7b41c722e6 --with-source"),
)
@click.argument("job_id", metavar="JOB_ID")
@click.option(
    "--with-source",
    is_flag=True,
    help="also delete the job's source object version from the ingest bucket, for good",
)
@json_option()
@with_operator
def delete(operator: Operator, job_id: str, with_source: bool, as_json: bool) -> int:
    """Delete a job as deleting its source object does: the job becomes DELETED, its
    runs' outputs are deleted, and its parse artifacts too unless another job with the
    same bytes uses them. A run still going stops at its next step and what it writes is
    deleted. Deleting again changes nothing. JOB_ID may be any unique prefix; no such job
    exits 1."""
    from richdoc_tools.cli import render
    from richdoc_tools.operator import AmbiguousJobId
    from richdoc_tools.terminal import visible

    try:
        deleted = operator.delete_job(job_id, with_source=with_source)
    except AmbiguousJobId as exc:
        raise UsageError(render.ambiguous_job_id(exc)) from exc
    if deleted is None:
        print(f"richdoc jobs delete: no job {visible(job_id)}", file=sys.stderr)
        return EXIT_FAILED
    render.job_deleted(deleted, with_source=with_source, as_json=as_json)
    return 0
