"""What ``richdoc deploy check`` prints: the preflight's findings and their fixes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from richdoc_tools.cli.render.tables import print_json
from richdoc_tools.terminal import visible

if TYPE_CHECKING:
    from richdoc_tools.preflight import Finding


def deploy_check(
    findings: Sequence[Finding], report: Mapping[str, object], *, as_json: bool
) -> None:
    """``richdoc deploy check``: ``report`` as JSON, or one line per finding and what
    fixes a failing one."""
    if as_json:
        print_json(report)
        return
    marks = {"ok": "ok   ", "fail": "FAIL ", "check": "CHECK", "warn": "WARN "}
    for finding in findings:
        print(f"{marks[finding.status]} {finding.check}: {visible(finding.says)}")
        if finding.fix and finding.status != "ok":
            print(f"      fix: {visible(finding.fix)}")
    if all(finding.status != "fail" for finding in findings):
        print("nothing found that would make the deploy fail")
    else:
        print("the deploy would fail: apply the fixes above, then run this check again")
