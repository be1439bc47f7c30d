"""Failed jobs grouped by what went wrong (``richdoc jobs failures``, ``jobs redrive
--signature``, and the console).

A failure's signature is its kind, feature tag and error name, and the stable part of its
reason: the reason with what differs from one job to the next taken out (quoted strings,
URLs and ``s3://`` addresses, paths and object keys, file names, UUIDs, hex digests and
ids, numbers), each replaced by a placeholder that says what was there. ``normalise`` is
a pure function of the reason; the signature is a short hash of the four parts, shown
with the readable template.

Grouped are the jobs DEAD_LETTERED or FAILED (a failed run whose dead-letter message is
on its way): what an operator triages and redrives. CANCELLED jobs are not failures (an
operator stopped them); ``richdoc jobs list --status CANCELLED`` lists them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from richdoc.jobs import FAILED_STATUSES, Job, JobStatus
from richdoc.taxonomy import FailureKind

if TYPE_CHECKING:
    from datetime import datetime

    from richdoc_tools.ops.operator import Operator

SIGNATURE_CHARS = 12
# Job ids a group shows (all are counted).
EXAMPLES = 5

# In this order: a quoted string may hold a path, a URL a number, and so on. No
# placeholder matches a pattern itself, so normalising twice changes nothing.
_VARIABLE_PARTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`"), "<str>"),
    (re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE), "<url>"),
    (re.compile(r"[^\s<>'\"`()\[\]{},;]*[/\\][^\s<>'\"`()\[\]{},;]*"), "<path>"),
    (
        re.compile(
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE
        ),
        "<id>",
    ),
    # Hex digests and ids: both digits and letters (digits alone are a number, below).
    (re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"\b[\w~-]+(?:\.[\w~-]+)*\.[a-z][a-z0-9]{1,4}\b"), "<name>"),
    (re.compile(r"\d+(?:[.,]\d+)*"), "<n>"),
)
_SPACES = re.compile(r"\s+")


def normalise(reason: str) -> str:
    """The stable part of a failure reason (see the module docstring)."""
    for pattern, placeholder in _VARIABLE_PARTS:
        reason = pattern.sub(placeholder, reason)
    return _SPACES.sub(" ", reason).strip()


class FailureSignature(BaseModel):
    """What a group of failures shares."""

    model_config = ConfigDict(frozen=True)

    kind: FailureKind
    feature: str | None
    error: str | None
    template: str  # the normalised reason

    @property
    def id(self) -> str:
        """A short stable hash of the four parts (what ``--signature`` takes)."""
        parts = [str(self.kind), self.feature, self.error, self.template]
        digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
        return digest[:SIGNATURE_CHARS]


def signature_of(job: Job) -> FailureSignature:
    failure = job.failure
    if failure is None:  # a failed job always has one; an old record might not
        return FailureSignature(kind=FailureKind.INTERNAL, feature=None, error=None, template="")
    return FailureSignature(
        kind=failure.kind,
        feature=failure.feature,
        error=failure.error,
        template=normalise(failure.reason),
    )


def matches_signature(job: Job, signature: str) -> bool:
    """Whether ``job``'s signature is ``signature`` (or starts with it)."""
    return bool(signature) and signature_of(job).id.startswith(signature)


class FailureGroup(BaseModel):
    """Failed jobs that share a signature (``richdoc jobs failures --json``: one each)."""

    model_config = ConfigDict(frozen=True)

    signature: str
    kind: FailureKind
    feature: str | None
    error: str | None
    template: str
    count: int
    statuses: dict[str, int]  # DEAD_LETTERED / FAILED
    first_seen: str | None
    last_seen: str | None
    examples: list[str]  # up to EXAMPLES job ids, most recent first


def _seen(job: Job) -> str | None:
    return job.ended_at or job.updated_at


def group_failures(jobs: Iterable[Job]) -> list[FailureGroup]:
    """Failed jobs grouped by signature, the biggest group first (then the most recent)."""
    grouped: dict[str, tuple[FailureSignature, list[Job]]] = {}
    for job in jobs:
        if job.status not in FAILED_STATUSES:
            continue
        signature = signature_of(job)
        grouped.setdefault(signature.id, (signature, []))[1].append(job)
    groups = []
    for signature_id, (signature, members) in grouped.items():
        members.sort(key=lambda j: (_seen(j) or "", j.job_id), reverse=True)
        seen = [s for s in (_seen(j) for j in members) if s]
        statuses: dict[str, int] = {}
        for member in members:
            statuses[member.status] = statuses.get(member.status, 0) + 1
        groups.append(
            FailureGroup(
                signature=signature_id,
                kind=signature.kind,
                feature=signature.feature,
                error=signature.error,
                template=signature.template,
                count=len(members),
                statuses=statuses,
                first_seen=min(seen, default=None),
                last_seen=max(seen, default=None),
                examples=[j.job_id for j in members[:EXAMPLES]],
            )
        )
    return sorted(groups, key=lambda g: (g.count, g.last_seen or ""), reverse=True)


def fleet_failures(
    operator: Operator, *, status: JobStatus | None = None, since: datetime | None = None
) -> list[FailureGroup]:
    """The stack's failed jobs (both failed statuses, or ``status`` alone; updated at or
    after ``since``) grouped by signature: ``richdoc jobs failures`` and the console."""
    if status is not None and status not in FAILED_STATUSES:
        raise ValueError(f"{status}: failures are DEAD_LETTERED or FAILED jobs")
    statuses = [status] if status is not None else list(FAILED_STATUSES)
    return group_failures(job for s in statuses for job in operator.jobs.list_jobs(s, since=since))
