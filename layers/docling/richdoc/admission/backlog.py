"""The backlog: jobs waiting for a slot, a tenant's two backlogs apart, in the order they came.

A waiting job is its own backlog entry: a QUEUED job item carries ``backlog_key`` only
while it waits, and the sparse backlog index (``by-queue``: ``tenant``, ``backlog_key``;
keys only) lists each tenant's waiting jobs in the order of that key. A tenant has two
backlogs there (``BacklogKind``): its uploads (and their redrives), keyed ``<queued
at>#<job id>``, and its reprocessed runs, keyed after a prefix that sorts after every
time (``keys.backlog_key``), so that a reprocess of thousands of documents waits apart
from the tenant's fresh uploads and the two take turns. A job leaves its backlog in the
write that admits, cancels, deletes or closes its run. Nothing is received or polled:
waiting costs the item's storage, for as long as the record is kept.

Backlogs that may have waiting jobs are found in the lane: each backlog has a lane item
(``keys.lane_key``: one per tenant and backlog), which is in the lane while it carries
``lane``, set by whoever queues a run, before the run waits (the starter, a redrive, a
reprocess: the run's write wakes the dispatcher, which must find its backlog). The
sparse lane index (``tenants-by-service``: ``lane``, ``last_served``) lists the lane in
the order of the turns: the least recently served backlog first.

Both are global secondary indexes, which DynamoDB reads eventually consistently: a write
shows there a moment after the table has it (within a second as a rule, longer rarely),
so an index may still list a job admitted, cancelled or deleted a moment ago, and may not
list yet one just queued. So:

* a look at a backlog pages past entries whose jobs no longer wait (the table, read
  strongly, says so) instead of taking them for the end of the backlog (``oldest`` gives
  one page and where the next begins);
* a backlog leaves the lane only when the index listed no job at all in it, and not
  within ``LANE_GRACE_S`` of its last mark (``clear``);
* the waiting jobs are counted from the backlog index itself (``census``: one pass over
  the keys-only index), never from the lane: a backlog out of the lane still counts, and
  the dispatcher's minutely schedule puts it back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.jobs import Job, timestamp
from richdoc.jobs.keys import (
    BACKLOG_INDEX,
    LANE_INDEX,
    REPROCESS_PREFIX,
    BacklogKind,
    backlog_of,
    job_id_of,
    lane_key,
    queued_at_of,
)
from richdoc.jobs.table import conditional_check_failed

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import (
        QueryInputTableQueryTypeDef,
        QueryOutputTableTypeDef,
        ScanInputTableScanTypeDef,
    )

# The lane's one value: the index is sparse on its presence.
BACKLOG_LANE = "backlog"
# A backlog never served sorts first.
NEVER_SERVED = "0"
# How long a lane item marked for a new job stays in the lane even when its backlog reads
# empty.
LANE_GRACE_S = 60
Result = TypeVar("Result")
# How many lane items one read of the lane takes (the dispatcher reads no further than
# the turns it gives out).
LANE_PAGE = 25


class LaneEntry(BaseModel):
    """One of a tenant's backlogs in the lane, as the lane index shows its lane item."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    tenant: str
    # Stored as ``queue``; lane items written before tenants had a reprocess backlog are
    # their uploads'.
    backlog: BacklogKind = Field(default=BacklogKind.UPLOADS, validation_alias="queue")
    last_served: str = NEVER_SERVED
    marked_at: str | None = None

    @property
    def name(self) -> str:
        """``acme``, or ``acme (reprocess)``: the backlog as logs and operators name it."""
        return (
            self.tenant
            if self.backlog is BacklogKind.UPLOADS
            else f"{self.tenant} ({self.backlog})"
        )


@dataclass(frozen=True)
class BacklogPage:
    """One page of a backlog as the index lists it: the job ids in order, where a
    read goes on after them (the last one's index key; None when it listed none), and
    whether the index holds more."""

    job_ids: list[str]
    resume: Mapping[str, Any] | None
    more: bool


class BacklogCount(BaseModel):
    """One backlog as the backlog index counts it."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    backlog: BacklogKind
    waiting: int
    oldest_queued_at: str


class Census(BaseModel):
    """Every backlog the backlog index lists a waiting job in."""

    model_config = ConfigDict(frozen=True)

    backlogs: list[BacklogCount]

    @property
    def waiting(self) -> int:
        return sum(q.waiting for q in self.backlogs)

    @property
    def oldest_queued_at(self) -> str | None:
        return min((q.oldest_queued_at for q in self.backlogs), default=None)

    def age_s(self, now: datetime) -> float:
        """How long the oldest waiting job has waited (0 when none waits)."""
        oldest = self.oldest_queued_at
        if oldest is None:
            return 0.0
        return max(0.0, (now - datetime.fromisoformat(oldest)).total_seconds())


class Backlog:
    """The waiting jobs, their backlogs and the lane (see the module's docstring)."""

    def __init__(self, table: Table, clock: Callable[[], str]) -> None:
        self.table = table
        self.clock = clock

    # ---- the lane ----------------------------------------------------------------------

    def queue_run(
        self, tenant: str, write: Callable[[], Result], backlog: BacklogKind = BacklogKind.UPLOADS
    ) -> Result:
        """Queue a run in one of ``tenant``'s backlogs: the backlog joins the lane, then
        ``write`` records the run QUEUED (what it returns is returned). The only way a run
        starts waiting: the starter's uploads and redrives, and a reprocess.

        The lane item is marked first because the job's write wakes the dispatcher (its stream
        record), which looks for waiting jobs through the lane: marked after, a new
        tenant's first job could be looked for before the mark and wait for the next
        trigger, the minutely schedule (an intermittent failure taught it). A write that
        queues nothing (a duplicate) leaves a mark that the dispatcher clears."""
        self.mark(tenant, backlog)
        return write()

    def mark(self, tenant: str, backlog: BacklogKind = BacklogKind.UPLOADS) -> None:
        """A job waits in one of ``tenant``'s backlogs: its lane item is marked, so the
        backlog is in the lane (keeping its place by when it was last served)."""
        with aws_errors("marking a tenant's backlog"):
            retry_conflicts(
                self.table.update_item,
                Key=lane_key(tenant, backlog),
                UpdateExpression=(
                    "SET #t = :t, #q = :q, #l = :l, #m = :m, #s = if_not_exists(#s, :never)"
                ),
                ExpressionAttributeNames={
                    "#t": "tenant",
                    "#q": "queue",
                    "#l": "lane",
                    "#m": "marked_at",
                    "#s": "last_served",
                },
                ExpressionAttributeValues={
                    ":t": tenant,
                    ":q": str(backlog),
                    ":l": BACKLOG_LANE,
                    ":m": self.clock(),
                    ":never": NEVER_SERVED,
                },
            )

    def served(self, entry: LaneEntry) -> None:
        """The backlog was just served: it goes to the back of the lane."""
        with aws_errors("recording a tenant's turn"):
            retry_conflicts(
                self.table.update_item,
                Key=lane_key(entry.tenant, entry.backlog),
                UpdateExpression="SET #s = :s",
                ExpressionAttributeNames={"#s": "last_served"},
                ExpressionAttributeValues={":s": self.clock()},
            )

    def lane(self, page_size: int = LANE_PAGE) -> Iterator[list[LaneEntry]]:
        """The lane page by page, least recently served first: a reader reads only as far
        as it needs."""
        query: QueryInputTableQueryTypeDef = {
            "IndexName": LANE_INDEX,
            "KeyConditionExpression": Key("lane").eq(BACKLOG_LANE),
            "Limit": page_size,
        }
        for page in self._pages(query, "reading the lane"):
            yield [LaneEntry.model_validate(item) for item in page.get("Items", [])]

    def entries(self) -> list[LaneEntry]:
        """The whole lane, least recently served first."""
        return [entry for page in self.lane(page_size=1000) for entry in page]

    def clear(self, entry: LaneEntry, now: datetime) -> bool:
        """Take the backlog out of the lane (the index listed no job in it), unless a run
        was queued in it within the grace period; whether it was taken out."""
        cutoff = timestamp(now - timedelta(seconds=LANE_GRACE_S))
        try:
            with aws_errors("clearing a tenant's backlog"):
                retry_conflicts(
                    self.table.update_item,
                    Key=lane_key(entry.tenant, entry.backlog),
                    UpdateExpression="REMOVE #l",
                    ConditionExpression=Attr("marked_at").lt(cutoff),
                    ExpressionAttributeNames={"#l": "lane"},
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                return False
            raise
        return True

    # ---- a backlog ---------------------------------------------------------------------

    def oldest(
        self,
        tenant: str,
        limit: int,
        backlog: BacklogKind = BacklogKind.UPLOADS,
        after: Mapping[str, Any] | None = None,
    ) -> BacklogPage:
        """The ids of the backlog's ``limit`` oldest jobs the index lists (after ``after``),
        oldest first. The index lags the table: some may have been admitted or cancelled
        since."""
        query: QueryInputTableQueryTypeDef = {
            "IndexName": BACKLOG_INDEX,
            "KeyConditionExpression": _in_backlog(tenant, backlog),
            "Limit": limit,
        }
        if after is not None:
            query["ExclusiveStartKey"] = dict(after)
        with aws_errors("reading a tenant's backlog"):
            page = self.table.query(**query)
        items = page.get("Items", [])
        # A keys-only entry is its own index key (the table's and the index's attributes).
        resume = page.get("LastEvaluatedKey") or (dict(items[-1]) if items else None)
        ids = [job_id_of(str(item["pk"])) for item in items]
        return BacklogPage(ids, resume, "LastEvaluatedKey" in page)

    def position(self, job: Job) -> int | None:
        """The job's place in its backlog (1: next); None when it is not waiting."""
        if not job.waiting or job.tenant is None or job.backlog_key is None:
            return None
        return self.positions(job.tenant, job.backlog_key).get(job.job_id)

    def positions(self, tenant: str, through: str) -> dict[str, int]:
        """The place (1: next) of each job waiting in the backlog of the one whose
        ``backlog_key`` is ``through``, up to that one: one pass over the keys-only index,
        however many are asked about."""
        place: ConditionBase = Key("backlog_key").lte(through)
        if backlog_of(through) is BacklogKind.REPROCESS:
            place = Key("backlog_key").between(REPROCESS_PREFIX, through)
        query: QueryInputTableQueryTypeDef = {
            "IndexName": BACKLOG_INDEX,
            "KeyConditionExpression": Key("tenant").eq(tenant) & place,
        }
        items = (item for page in self._pages(query) for item in page.get("Items", []))
        return {job_id_of(str(item["pk"])): n for n, item in enumerate(items, start=1)}

    # ---- every backlog -----------------------------------------------------------------

    def census(self) -> Census:
        """Every backlog the backlog index lists waiting jobs in: how many, and the oldest's
        time (one pass over the keys-only index, thousands of waiting jobs a page)."""
        counts: dict[tuple[str, BacklogKind], tuple[int, str]] = {}
        scan: ScanInputTableScanTypeDef = {
            "IndexName": BACKLOG_INDEX,
            "ProjectionExpression": "#t, #b",
            "ExpressionAttributeNames": {"#t": "tenant", "#b": "backlog_key"},
        }
        with aws_errors("counting the backlog"):
            while True:
                page = self.table.scan(**scan)
                for item in page.get("Items", []):
                    key = str(item["backlog_key"])
                    where = (str(item["tenant"]), backlog_of(key))
                    count, oldest = counts.get(where, (0, key))
                    counts[where] = (count + 1, min(oldest, key))
                if "LastEvaluatedKey" not in page:
                    break
                scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return Census(
            backlogs=[
                BacklogCount(
                    tenant=tenant,
                    backlog=backlog,
                    waiting=count,
                    oldest_queued_at=queued_at_of(oldest),
                )
                for (tenant, backlog), (count, oldest) in sorted(counts.items())
            ]
        )

    def repair(self, census: Census) -> list[LaneEntry]:
        """Put back in the lane every backlog the census counts waiting jobs in whose lane
        item (read strongly) is out of it; the backlogs put back."""
        wanted = {(q.tenant, q.backlog): q for q in census.backlogs}
        keys = [lane_key(tenant, backlog) for tenant, backlog in wanted]
        in_lane = set()
        for item in self._batch_get(keys):
            if item.get("lane") == BACKLOG_LANE:
                entry = LaneEntry.model_validate(item)
                in_lane.add((entry.tenant, entry.backlog))
        repaired = []
        for where in sorted(wanted.keys() - in_lane):
            self.mark(*where)
            repaired.append(LaneEntry(tenant=where[0], backlog=where[1]))
        return repaired

    def _batch_get(self, keys: list[dict[str, str]]) -> Iterator[Mapping[str, Any]]:
        """The items with these keys that exist, read strongly, 100 a request."""
        client, name = self.table.meta.client, self.table.name
        for start in range(0, len(keys), 100):
            request: dict[str, Any] = {
                name: {"Keys": keys[start : start + 100], "ConsistentRead": True}
            }
            while request:
                with aws_errors("reading the lane"):
                    answer = client.batch_get_item(RequestItems=request)
                yield from answer["Responses"].get(name, [])
                request = dict(answer.get("UnprocessedKeys") or {})

    def _pages(
        self, query: QueryInputTableQueryTypeDef, what: str = "querying the backlog"
    ) -> Iterator[QueryOutputTableTypeDef]:
        while True:
            with aws_errors(what):
                page = self.table.query(**query)
            yield page
            if "LastEvaluatedKey" not in page:
                return
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _in_backlog(tenant: str, backlog: BacklogKind) -> ConditionBase:
    """The key condition of one of a tenant's backlogs on the backlog index."""
    if backlog is BacklogKind.UPLOADS:
        return Key("tenant").eq(tenant) & Key("backlog_key").lt(REPROCESS_PREFIX)
    return Key("tenant").eq(tenant) & Key("backlog_key").begins_with(REPROCESS_PREFIX)
