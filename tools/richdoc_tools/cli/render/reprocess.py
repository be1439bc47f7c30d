"""What ``richdoc reprocess`` prints, as it goes. User-controlled values (keys, tenants)
reach the terminal through ``richdoc_tools.terminal``."""

from __future__ import annotations

import json
import sys

from rich.console import Console

from richdoc_tools.ops.reprocess import (
    ReprocessCursor,
    ReprocessResult,
    ReprocessTally,
)
from richdoc_tools.terminal import markup, visible

REPROCESS_COLUMNS = ("job id", "key", "tenant", "status", "outcome", "run", "detail")


class ReprocessWriter:
    """``richdoc reprocess``'s output, written as the results come, so that nothing of
    a long reprocess is held for the end: in a terminal a line a job, in a pipe
    tab-separated rows under a header (``tables``), with ``--json`` one JSON document
    (``{"dry_run", "results": [...], "matched", "queued", "skipped"}``) written a result at
    a time. The token that resumes it goes to stderr at the start and, when it stops
    early, as it stops."""

    def __init__(self, cursor: ReprocessCursor, *, as_json: bool) -> None:
        self.cursor = cursor
        self.as_json = as_json
        self.tally = ReprocessTally()
        self.console = Console()

    def start(self) -> None:
        self._hint("if it stops, go on with")
        if self.as_json:
            print(f'{{"dry_run": {json.dumps(self.cursor.dry_run)}, "results": [', flush=True)
        elif not self.console.is_terminal:
            print("\t".join(REPROCESS_COLUMNS), flush=True)

    def result(self, result: ReprocessResult, cursor: ReprocessCursor) -> None:
        self.cursor = cursor
        first = self.tally.matched == 0
        self.tally.add(result)
        if self.as_json:
            line = json.dumps(result.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
            print(("  " if first else ", ") + line, flush=True)
        elif self.console.is_terminal:
            self.console.print(
                f"{result.job_id[:12]} {markup(result.key)} {result.status}: "
                f"{result.outcome} ({markup(result.detail)})",
                highlight=False,
            )
        else:
            row = [result.job_id, result.key, result.tenant, result.status, result.outcome]
            values = [*row, result.run, result.detail]
            print("\t".join("-" if v is None else visible(v) for v in values), flush=True)

    def page(self, cursor: ReprocessCursor) -> None:
        self.cursor = cursor

    def stopped(self) -> None:
        self._hint("stopped; go on with")

    def finish(self) -> None:
        tally = self.tally
        if self.as_json:
            counts = json.dumps(tally.model_dump())[1:-1]
            print(f"], {counts}}}", flush=True)
            return
        verb = "would queue" if self.cursor.dry_run else "queued"
        print(f"{tally.matched} matched; {verb} {tally.queued}; skipped {tally.skipped}")

    def _hint(self, what: str) -> None:
        # Printed whole, never wrapped: the token is one word to paste back (base64url).
        print(f"{what}: richdoc reprocess --resume {self.cursor.token()}", file=sys.stderr)
