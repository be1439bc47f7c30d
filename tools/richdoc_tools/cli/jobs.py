"""``richdoc jobs``: the job records of a stack (deployed, or ``richdoc local serve``):
list, show, backlog, watch, cancel, redrive, failures, tiers.

A command here is one function: ``@jobs.command(...)`` and ``@with_operator``, which adds
the stack options and passes the stack's ``Operator``; it parses its options, calls the
tools' function that does the work (``richdoc_tools.ops.cancel``, ``redrive``, ``failures``,
``tiers``, ``watch``: what the console calls too) and hands the result to ``render``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import (
    EXIT_FAILED,
    EXIT_REFUSED,
    UsageError,
    outcome_code,
    resolving,
)
from richdoc_tools.cli.options import (
    FailureKindChoice,
    JobStatusChoice,
    PositiveSeconds,
    Rate,
    Since,
    example,
    json_option,
    with_operator,
)

if TYPE_CHECKING:
    from datetime import datetime

    from richdoc.jobs import JobStatus
    from richdoc.taxonomy import FailureKind
    from richdoc_tools.ops.operator import Operator


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
    """List jobs, optionally by status (uses the status index, no scan). A job waiting in
    the backlog shows its place in its tenant's backlog and how long it has waited."""
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.backlog import places

    listed = operator.jobs.list_jobs(status)
    render.jobs_list(listed, as_json=as_json, places=places(operator, listed))
    return 0


@jobs.command(
    short_help="the backlog: each tenant's waiting jobs, the slots held, when it drains",
    epilog=example("richdoc jobs backlog --stack richdoc"),
)
@json_option()
@with_operator
def backlog(operator: Operator, as_json: bool) -> int:
    """The jobs waiting for a slot, tenant by tenant (how many, the oldest's age, the slots
    the tenant's jobs hold), the deployment's capacity and the slots held, its throughput
    measured on recent runs (documents per hour) and when the backlog drains at it."""
    from richdoc_tools.cli.render import admission as render
    from richdoc_tools.ops.backlog import outlook

    render.backlog_outlook(outlook(operator), as_json=as_json)
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
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.jobs import show_job
    from richdoc_tools.terminal import visible

    found = resolving(lambda: show_job(operator, job_id))
    if found is None:
        print(f"richdoc jobs show: no job {visible(job_id)}", file=sys.stderr)
        return EXIT_FAILED
    render.job_show(found, as_json=as_json)
    return 0


@jobs.command(
    short_help="cancel jobs: record the cancel on each job, then stop its execution",
    epilog=example('richdoc jobs cancel 4c7b41c722e6 --reason "wrong upload"'),
)
@click.argument("job_ids", nargs=-1, required=True, metavar="JOB_ID...")
@click.option("--reason", default=None, metavar="TEXT", help="why (kept on the job)")
@click.option(
    "--by", default=None, metavar="WHO", help="who cancels (default: the caller identity's ARN)"
)
@json_option()
@with_operator
def cancel(
    operator: Operator, job_ids: tuple[str, ...], reason: str | None, by: str | None, as_json: bool
) -> int:
    """Cancel QUEUED or RUNNING jobs (whole ids or unique prefixes). Each cancel is
    committed on the job record (CANCELLED, with who, when and why), then the run's
    execution is stopped. A job that had already finished (SUCCEEDED, DEAD_LETTERED, or
    FAILED with its dead-letter message on its way) is left alone and said so: exit 3.
    Exit 1 when an id matches no job; cancelling a CANCELLED job again is fine (exit 0)."""
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.cancel import CancelOutcome, cancel_jobs

    results = resolving(lambda: cancel_jobs(operator, list(job_ids), by=by, reason=reason))
    render.cancel_results(results, as_json=as_json)
    outcomes = {r.outcome for r in results}
    if CancelOutcome.NOT_FOUND in outcomes:
        return EXIT_FAILED
    return EXIT_REFUSED if CancelOutcome.FINISHED in outcomes else 0


@jobs.command(
    short_help="start the next run of jobs, by id or by filter (count first, bounded rate)",
    epilog=example(
        "richdoc jobs redrive 4c7b41c722e6",
        "richdoc jobs redrive --status DEAD_LETTERED --kind transient --since 24h --dry-run",
    ),
)
@click.argument("job_ids", nargs=-1, metavar="[JOB_ID...]")
@click.option(
    "--status", type=JobStatusChoice(), default=None, help="redrive every job in this status"
)
@click.option("--kind", type=FailureKindChoice(), default=None, help="... of this failure kind")
@click.option("--feature", default=None, metavar="TAG", help="... with this feature tag")
@click.option("--since", type=Since(), default=None, help="... updated at or after this time")
@click.option(
    "--signature", default=None, metavar="SIG", help="... in this group of `jobs failures`"
)
@click.option("--dry-run", is_flag=True, help="count and list, send nothing")
@click.option(
    "--rate", type=Rate(), default="10/s", show_default=True, help="at most this many sends"
)
@click.option(
    "--by", default=None, metavar="WHO", help="who redrives (default: the caller identity's ARN)"
)
@json_option()
@with_operator
def redrive(
    operator: Operator,
    job_ids: tuple[str, ...],
    status: JobStatus | None,
    kind: FailureKind | None,
    feature: str | None,
    since: datetime | None,
    signature: str | None,
    dry_run: bool,
    rate: float,
    by: str | None,
    as_json: bool,
) -> int:
    """Start run N+1 of jobs that ended DEAD_LETTERED, FAILED or CANCELLED, from the
    ingest message stored on each job: by id (whole ids or unique prefixes), or every job
    in --status that matches --kind, --feature, --since and --signature (the count is
    printed first, then the messages are sent at --rate). Idempotent: a job running
    again, or whose redrive is already on its way, is skipped. Exit 3 when a job given by
    id cannot run again (it succeeded, or has no stored message); 1 when an id matches no
    job or a message could not be sent."""
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.redrive import (
        Pacer,
        RedriveFilter,
        RedriveOutcome,
        redrive_ids,
        redrive_selected,
        select,
    )

    filtering = any(v is not None for v in (status, kind, feature, since, signature))
    if job_ids and filtering:
        raise UsageError("give job ids or --status with filters, not both")
    if job_ids:
        report = resolving(lambda: redrive_ids(operator, job_ids, by=by, dry_run=dry_run))
    else:
        if status is None:
            raise UsageError("give job ids, or --status (with --kind, --feature, ...)")
        if not status.redrivable:
            raise UsageError(
                f"--status {status}: only DEAD_LETTERED, FAILED and CANCELLED jobs run again"
            )
        wanted = RedriveFilter(
            status=status, kind=kind, feature=feature, since=since, signature=signature
        )
        selected = select(operator, wanted)
        render.redrive_count(len(selected), wanted, rate, dry_run=dry_run, as_json=as_json)
        report = redrive_selected(
            operator,
            selected,
            pacer=Pacer(rate),
            by=by,
            dry_run=dry_run,
            on_result=None if as_json else render.redrive_line,
        )
    render.redrive_report(report, as_json=as_json)
    outcomes = {r.outcome for r in report.results}
    if outcomes & {RedriveOutcome.NOT_FOUND, RedriveOutcome.FAILED}:
        return EXIT_FAILED
    return EXIT_REFUSED if RedriveOutcome.REFUSED in outcomes else 0


@jobs.command(
    short_help="failed jobs grouped by a normalised signature (kind, feature, error, reason)",
    epilog=example("richdoc jobs failures --since 7d"),
)
@click.option(
    "--status",
    type=JobStatusChoice(),
    default=None,
    help="only DEAD_LETTERED or only FAILED (default: both)",
)
@click.option("--since", type=Since(), default=None, help="failed at or after this time")
@json_option()
@with_operator
def failures(
    operator: Operator, status: JobStatus | None, since: datetime | None, as_json: bool
) -> int:
    """Group DEAD_LETTERED and FAILED jobs by the signature of their failure: the kind,
    the feature tag, the error name and the reason with ids, numbers, paths, object keys
    and quoted strings taken out. Each group has a count, when it was first and last seen,
    some job ids, and the signature `jobs redrive --signature` takes."""
    from richdoc.jobs import FAILED_STATUSES
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.failures import fleet_failures

    if status is not None and status not in FAILED_STATUSES:
        raise UsageError(f"--status {status}: failures are DEAD_LETTERED or FAILED jobs")
    render.failure_groups(fleet_failures(operator, status=status, since=since), as_json=as_json)
    return 0


@jobs.command(
    short_help="the parse tier ladder over the fleet: pages and size per final tier, escalations",
    epilog=example("richdoc jobs tiers --since 30d"),
)
@click.option("--since", type=Since(), default=None, help="jobs updated at or after this time")
@json_option()
@with_operator
def tiers(operator: Operator, since: datetime | None, as_json: bool) -> int:
    """For each parse memory tier: the jobs whose parse finally succeeded there (their
    pages and size), how often a parse at the tier ended in a resource limit (and
    escalated), and its children's peak memory against their ceilings. Reads every job
    (or those updated since --since) and its run's attempts."""
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.tiers import fleet_tiers

    render.tier_report(fleet_tiers(operator, since=since), as_json=as_json)
    return 0


@jobs.command(
    short_help="follow one job's phase until its run ends; exit with its outcome",
    epilog=example("richdoc jobs watch 4c7b41c722e6"),
)
@click.argument("job_id", metavar="JOB_ID")
@click.option(
    "--timeout",
    type=PositiveSeconds(),
    default=None,
    metavar="S",
    help="stop waiting after S seconds (exit 1)",
)
@json_option("print each change as one JSON line (the job as `jobs show --json`, no attempts)")
@with_operator
def watch(operator: Operator, job_id: str, timeout: float | None, as_json: bool) -> int:
    """Print the job's status and progress (its phase: queued, planning, parsing at a tier,
    shards k of n done, merging, projecting, detecting, recording, dead-lettering) each
    time it changes, until the job is terminal. Exit 0 when it succeeded, 4 when it was
    cancelled, 5 when deleted, its failure kind's code when dead-lettered (10 corrupt_input, 20
    unsupported_feature, 30 resource_limit, 75 transient, 70 internal), 1 on --timeout."""
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.jobs import find_job
    from richdoc_tools.ops.watch import WatchTimedOut, watch_job
    from richdoc_tools.terminal import visible

    found = resolving(lambda: find_job(operator, job_id))
    if found is None:
        print(f"richdoc jobs watch: no job {visible(job_id)}", file=sys.stderr)
        return EXIT_FAILED
    try:
        job = watch_job(
            operator.jobs,
            found.job_id,
            on_change=lambda seen: render.watch_line(seen, as_json=as_json),
            timeout_s=timeout,
        )
    except WatchTimedOut as exc:
        print(
            f"richdoc jobs watch: timed out after {timeout:g} s; the job is still "
            f"{exc.job.status} ({exc.job.progress().describe()})",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return outcome_code(job)


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
    from richdoc_tools.cli.render import jobs as render
    from richdoc_tools.ops.jobs import delete_job
    from richdoc_tools.terminal import visible

    deleted = resolving(lambda: delete_job(operator, job_id, with_source=with_source))
    if deleted is None:
        print(f"richdoc jobs delete: no job {visible(job_id)}", file=sys.stderr)
        return EXIT_FAILED
    render.job_deleted(deleted, with_source=with_source, as_json=as_json)
    return 0
