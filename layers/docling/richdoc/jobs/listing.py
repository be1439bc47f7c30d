"""Jobs page by page, the most recently changed first, from the by-status index.

The index is partitioned by status and sorted by ``updated_at``, so one status is one
descending query; a listing of several statuses merges their queries. A page ends at a
``Position`` (the last job's ``updated_at`` and id), which the next page starts after: a
keyset cursor, valid across statuses and across requests, and opaque to its users
(``Position.token``). Filters on the failure and the tier are DynamoDB filter
expressions, so a page costs the items read, not the items shown; counts are
``Select=COUNT`` queries (no items are returned).

A job that changes while someone pages moves to the front of the order: it may then be
missed by later pages or shown again on the first one, as in any live listing.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from pydantic import BaseModel, ConfigDict, ValidationError

from richdoc.awserrors import aws_errors
from richdoc.jobs.keys import STATUS_INDEX
from richdoc.jobs.model import Job, JobStatus

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import QueryInputTableQueryTypeDef


class Position(BaseModel):
    """Where a page ended: its last job. The next page holds the jobs after it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    updated_at: str
    job_id: str

    @classmethod
    def of(cls, job: Job) -> Position:
        return cls(updated_at=job.updated_at or "", job_id=job.job_id)

    def token(self) -> str:
        """The position as an opaque, URL-safe cursor."""
        raw = json.dumps([self.updated_at, self.job_id], separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def from_token(cls, token: str) -> Position:
        """ValueError for anything ``token`` did not make."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            updated_at, job_id = json.loads(raw)
            return cls(updated_at=updated_at, job_id=job_id)
        except (binascii.Error, ValueError, TypeError, ValidationError) as exc:
            raise ValueError(f"not a page cursor: {token[:40]!r}") from exc

    def key(self) -> tuple[str, str]:
        return self.updated_at, self.job_id


def _order(job: Job) -> tuple[str, str]:
    return job.updated_at or "", job.job_id


@dataclass(frozen=True)
class JobFilter:
    """Which jobs a listing holds. Empty ``statuses``: every status."""

    statuses: tuple[JobStatus, ...] = ()
    kind: str | None = None  # failure.kind
    feature: str | None = None  # failure.feature
    tier: int | None = None
    since: str | None = None  # updated_at at or after (a record timestamp)
    until: str | None = None  # updated_at at or before

    def status_list(self) -> Sequence[JobStatus]:
        return self.statuses or tuple(JobStatus)

    def condition(self) -> ConditionBase | None:
        conditions: list[ConditionBase] = []
        if self.kind:
            conditions.append(Attr("failure.kind").eq(self.kind))
        if self.feature:
            conditions.append(Attr("failure.feature").eq(self.feature))
        if self.tier is not None:
            conditions.append(Attr("tier").eq(self.tier))
        combined: ConditionBase | None = None
        for condition in conditions:
            combined = condition if combined is None else combined & condition
        return combined


@dataclass(frozen=True)
class JobPage:
    jobs: list[Job]
    next: Position | None  # None: this is the last page


def page_jobs(
    table: Table, which: JobFilter, *, limit: int, after: Position | None = None
) -> JobPage:
    """Up to ``limit`` jobs after ``after`` (from the start when None), most recently
    changed first (ties by job id, descending)."""
    if limit < 1:
        raise ValueError(f"a page holds at least one job, not {limit}")
    candidates: list[Job] = []
    more = False
    for status in which.status_list():
        taken, status_more = _head(_descending(table, status, which, after, limit), limit)
        candidates += taken
        more = more or status_more
    candidates.sort(key=_order, reverse=True)
    page = candidates[:limit]
    more = more or len(candidates) > limit
    return JobPage(jobs=page, next=Position.of(page[-1]) if more and page else None)


def _head(jobs: Iterator[Job], limit: int) -> tuple[list[Job], bool]:
    """The first ``limit`` jobs, and any after them that share the last one's
    ``updated_at`` (the index does not order those by id, so the page needs them all to
    decide which come first); True when jobs remain after those."""
    taken = list(itertools.islice(jobs, limit))
    if len(taken) < limit:
        return taken, False
    for job in jobs:
        if job.updated_at != taken[-1].updated_at:
            return taken, True
        taken.append(job)
    return taken, False


def _descending(
    table: Table, status: JobStatus, which: JobFilter, after: Position | None, limit: int
) -> Iterator[Job]:
    """The status's jobs the filter holds, newest ``updated_at`` first, after ``after``."""
    upper = after.updated_at if after else which.until
    if after and which.until:
        upper = min(after.updated_at, which.until)
    key: ConditionBase = Key("job_status").eq(str(status))
    if which.since and upper:
        key &= Key("updated_at").between(which.since, upper)
    elif which.since:
        key &= Key("updated_at").gte(which.since)
    elif upper:
        key &= Key("updated_at").lte(upper)
    query: QueryInputTableQueryTypeDef = {
        "IndexName": STATUS_INDEX,
        "KeyConditionExpression": key,
        "ScanIndexForward": False,
        # Read about a page at a time; the next request only when the page needs more.
        "Limit": limit + 1,
    }
    condition = which.condition()
    if condition is not None:
        query["FilterExpression"] = condition
    while True:
        with aws_errors("listing jobs"):
            page = table.query(**query)
        for item in page.get("Items", []):
            job = Job.from_item(item)
            if after is None or _order(job) < after.key():
                yield job
        if "LastEvaluatedKey" not in page:
            return
        query["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def count_jobs(table: Table, statuses: Sequence[JobStatus], *, since: str | None = None) -> int:
    """How many jobs are in ``statuses`` (changed at or after ``since``): counted by the
    index, no items returned."""
    total = 0
    for status in statuses:
        key: ConditionBase = Key("job_status").eq(str(status))
        if since:
            key &= Key("updated_at").gte(since)
        query: QueryInputTableQueryTypeDef = {
            "IndexName": STATUS_INDEX,
            "KeyConditionExpression": key,
            "Select": "COUNT",
        }
        while True:
            with aws_errors("counting jobs"):
                page = table.query(**query)
            total += page.get("Count", 0)
            if "LastEvaluatedKey" not in page:
                break
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return total
