"""``richdoc reprocess``: run finished documents again, each a new run of the same source
version, through admission (``richdoc_tools.ops.reprocess``): every document, a key
prefix, a tenant, or those whose processor contract changed (after a docling upgrade, or a
change of the stack's DetectionRules)."""

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
@click.option("--dry-run", is_flag=True, help="count and list, queue nothing")
@json_option()
@with_operator
def reprocess(
    operator: Operator,
    everything: bool,
    prefix: str | None,
    tenant: str | None,
    contract_changed: bool,
    dry_run: bool,
    as_json: bool,
) -> int:
    """Queue the next run of each matching document's newest job (SUCCEEDED,
    DEAD_LETTERED, CANCELLED or FAILED; running ones are skipped) in its tenant's backlog:
    the dispatcher runs them as slots free, so no number of them makes a burst. Each run's
    end refreshes the document's manifest and publishes its completion event. Give --all,
    or narrow with --prefix, --tenant or --contract-changed (they combine)."""
    from richdoc_tools.cli.render.admission import reprocess_line, reprocess_report
    from richdoc_tools.ops.reprocess import ReprocessFilter, reprocess, select

    if not (everything or prefix or tenant or contract_changed):
        raise UsageError("say which documents: --all, --prefix, --tenant or --contract-changed")
    wanted = ReprocessFilter(prefix=prefix, tenant=tenant, contract_changed=contract_changed)
    jobs = select(operator, wanted)
    on_result = None if as_json else reprocess_line
    report = reprocess(operator, jobs, dry_run=dry_run, on_result=on_result)
    reprocess_report(report, as_json=as_json)
    return 0
