"""``richdoc reprocess``: run finished documents again, each a new run of the same source
version, through admission (``richdoc_tools.ops.reprocess``): every document, a key
prefix, a tenant, or those whose processor contract changed (after a docling upgrade, or a
change of the stack's DetectionRules). It reads its selection a page at a time, prints
each job as it goes, and can be resumed from the token it prints."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import UsageError
from richdoc_tools.cli.options import example, json_option, with_operator

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator


@click.command(
    short_help="run finished documents again, through the backlog (all, a prefix, a tenant, "
    "a changed contract)",
    epilog=example(
        "richdoc reprocess --contract-changed --dry-run",
        "richdoc reprocess --tenant acme",
        "richdoc reprocess --all",
        "richdoc reprocess --resume TOKEN",
    ),
)
@click.option("--all", "everything", is_flag=True, help="every document")
@click.option("--prefix", default=None, metavar="PREFIX", help="documents whose key starts so")
@click.option("--tenant", default=None, metavar="TENANT", help="one tenant's documents")
@click.option(
    "--contract-changed",
    is_flag=True,
    help="documents that succeeded under another processor contract than today's: this "
    "richdoc's parse (a docling upgrade), the stack's DetectionRules",
)
@click.option(
    "--include-cancelled",
    is_flag=True,
    help="run CANCELLED jobs again too (skipped otherwise: an operator stopped them)",
)
@click.option(
    "--dry-run", is_flag=True, help="count and list with each job's status, queue nothing"
)
@click.option(
    "--resume",
    default=None,
    metavar="TOKEN",
    help="go on where a reprocess stopped (the token it printed; it holds the selection)",
)
@click.option(
    "--page-size",
    type=click.IntRange(1, 1000),
    default=1000,
    show_default=True,
    help="object versions read a page (what the command holds in memory at once)",
)
@json_option()
@with_operator
def reprocess(
    operator: Operator,
    everything: bool,
    prefix: str | None,
    tenant: str | None,
    contract_changed: bool,
    include_cancelled: bool,
    dry_run: bool,
    resume: str | None,
    page_size: int,
    as_json: bool,
) -> int:
    """Queue the next run of each matching document's current version's job (SUCCEEDED,
    DEAD_LETTERED or FAILED; CANCELLED with --include-cancelled) in its tenant's backlog,
    in key order: the dispatcher runs them as slots free, so no number of them makes a
    burst. Running and DELETED jobs are skipped, each with its status and why. Each run's
    end refreshes the document's manifest and publishes its completion event; until then
    the manifest keeps the run before it. Give --all, or narrow with --prefix, --tenant or
    --contract-changed (they combine); or --resume with the token a reprocess printed."""
    from richdoc_tools.cli.render.reprocess import ReprocessWriter
    from richdoc_tools.ops.reprocess import ReprocessCursor, ReprocessFilter
    from richdoc_tools.ops.reprocess import reprocess as run_again

    if resume is not None:
        if everything or prefix or tenant or contract_changed or include_cancelled or dry_run:
            raise UsageError("--resume takes no selection: its token holds the one it began with")
        try:
            cursor = ReprocessCursor.from_token(resume)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    else:
        if not (everything or prefix or tenant or contract_changed):
            raise UsageError("say which documents: --all, --prefix, --tenant or --contract-changed")
        wanted = ReprocessFilter(
            prefix=prefix,
            tenant=tenant,
            contract_changed=contract_changed,
            include_cancelled=include_cancelled,
        )
        cursor = ReprocessCursor(wanted=wanted, dry_run=dry_run, began=operator.jobs.clock())
    writer = ReprocessWriter(cursor, as_json=as_json)
    writer.start()
    try:
        for result, after in run_again(operator, cursor, page_size=page_size, on_page=writer.page):
            writer.result(result, after)
    except BaseException:
        writer.stopped()
        raise
    writer.finish()
    return 0
