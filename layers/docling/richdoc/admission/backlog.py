"""The backlog: jobs waiting for a slot, queue by queue, in the order they came.

A waiting job is its own queue entry: a QUEUED job item carries ``backlog_key`` only while
it waits, and the sparse index ``by-queue`` (``tenant``, ``backlog_key``; keys only) lists
each tenant's waiting jobs in the order of that key. A tenant has two queues there: its
uploads (and their redrives), keyed ``<queued at>#<job id>``, and its reprocessed runs,
keyed after a prefix that sorts after every time (``keys.backlog_key``), so that a
reprocess of thousands of documents waits apart from the tenant's fresh uploads and the
two take turns. A job leaves its queue in the write that admits, cancels, deletes or
closes its run. Nothing is received or polled: waiting costs the item's storage, for as
long as the record is kept.

Queues that may have waiting jobs are found through their lane items (one per tenant and
queue, ``lane`` set by whoever queues a job, before the job waits: the starter, a
redrive, a reprocess; the job's write wakes the dispatcher, which must find its queue)
in the sparse index ``tenants-by-service`` (``lane``, ``last_served``): the least
recently served queue first.

Both are global secondary indexes, which DynamoDB reads eventually consistently: a write
shows there a moment after the table has it (within a second as a rule, longer rarely),
so an index may still list a job admitted, cancelled or deleted a moment ago, and may not
list yet one just queued. So:

* a look at a queue pages past entries whose jobs no longer wait (the table, read
  strongly, says so) instead of taking them for the end of the queue (``oldest`` gives
  one page and where the next begins);
* a queue leaves the lane only when the index listed no job at all for it, and not
  within ``LANE_GRACE_S`` of its last mark (``clear``);
* the backlog is counted from the queue index itself (``census``: one pass over the
  keys-only index), never from the lane: a queue out of the lane still counts, and the
  dispatcher's minutely schedule puts it back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.jobs import Job, timestamp
from richdoc.jobs.keys import (
    LANE_INDEX,
    QUEUE_INDEX,
    REPROCESS_PREFIX,
    QueueKind,
    job_id_of,
    queue_of,
    queued_at_of,
    tenant_key,
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
# A queue never served sorts first.
NEVER_SERVED = "0"
# How long a lane set by a new job is kept even when the queue reads empty.
LANE_GRACE_S = 60
# How many lane items one read of the lane takes (the dispatcher reads no further than
# the turns it gives out).
LANE_PAGE = 25


class LaneEntry(BaseModel):
    """One of a tenant's queues in the lane, as the lane index shows it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    tenant: str
    # Lane items written before tenants had a reprocess queue are their uploads'.
    queue: QueueKind = QueueKind.UPLOADS
    last_served: str = NEVER_SERVED
    marked_at: str | None = None

    @property
    def name(self) -> str:
        """``acme``, or ``acme (reprocess)``: the queue as logs and operators name it."""
        return self.tenant if self.queue is QueueKind.UPLOADS else f"{self.tenant} ({self.queue})"


@dataclass(frozen=True)
class QueuePage:
    """One page of a queue as the index lists it: the job ids in queue order, where a
    read goes on after them (the last one's index key; None when it listed none), and
    whether the index holds more."""

    job_ids: list[str]
    resume: Mapping[str, Any] | None
    more: bool


class QueueCount(BaseModel):
    """One queue as the queue index counts it."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    queue: QueueKind
    waiting: int
    oldest_queued_at: str


class Census(BaseModel):
    """Every queue the queue index lists a waiting job in."""

    model_config = ConfigDict(frozen=True)

    queues: list[QueueCount]

    @property
    def waiting(self) -> int:
        return sum(q.waiting for q in self.queues)

    @property
    def oldest_queued_at(self) -> str | None:
        return min((q.oldest_queued_at for q in self.queues), default=None)

    def age_s(self, now: datetime) -> float:
        """How long the oldest waiting job has waited (0 when none waits)."""
        oldest = self.oldest_queued_at
        if oldest is None:
            return 0.0
        return max(0.0, (now - datetime.fromisoformat(oldest)).total_seconds())


class Backlog:
    """The waiting jobs and the queues they wait in (see the module's docstring)."""

    def __init__(self, table: Table, clock: Callable[[], str]) -> None:
        self.table = table
        self.clock = clock

    # ---- the lane ----------------------------------------------------------------------

    def mark(self, tenant: str, queue: QueueKind = QueueKind.UPLOADS) -> None:
        """A job waits in one of ``tenant``'s queues: the queue joins the lane (keeping
        its place by when it was last served)."""
        with aws_errors("marking a tenant's backlog"):
            retry_conflicts(
                self.table.update_item,
                Key=tenant_key(tenant, queue),
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
                    ":q": str(queue),
                    ":l": BACKLOG_LANE,
                    ":m": self.clock(),
                    ":never": NEVER_SERVED,
                },
            )

    def served(self, entry: LaneEntry) -> None:
        """The queue was just served: it goes to the back of the lane."""
        with aws_errors("recording a tenant's turn"):
            retry_conflicts(
                self.table.update_item,
                Key=tenant_key(entry.tenant, entry.queue),
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
        """Take the queue out of the lane (the index listed no job for it), unless a job
        was queued in it within the grace period; whether it was taken out."""
        cutoff = timestamp(now - timedelta(seconds=LANE_GRACE_S))
        try:
            with aws_errors("clearing a tenant's backlog"):
                retry_conflicts(
                    self.table.update_item,
                    Key=tenant_key(entry.tenant, entry.queue),
                    UpdateExpression="REMOVE #l",
                    ConditionExpression=Attr("marked_at").lt(cutoff),
                    ExpressionAttributeNames={"#l": "lane"},
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                return False
            raise
        return True

    # ---- a queue -----------------------------------------------------------------------

    def oldest(
        self,
        tenant: str,
        limit: int,
        queue: QueueKind = QueueKind.UPLOADS,
        after: Mapping[str, Any] | None = None,
    ) -> QueuePage:
        """The ids of the queue's ``limit`` oldest jobs the index lists (after ``after``),
        oldest first. The index lags the table: some may have been admitted or cancelled
        since."""
        query: QueryInputTableQueryTypeDef = {
            "IndexName": QUEUE_INDEX,
            "KeyConditionExpression": _in_queue(tenant, queue),
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
        return QueuePage(ids, resume, "LastEvaluatedKey" in page)

    def position(self, job: Job) -> int | None:
        """The job's place in its queue (1: next); None when it is not waiting."""
        if not job.waiting or job.tenant is None or job.backlog_key is None:
            return None
        return self.positions(job.tenant, job.backlog_key).get(job.job_id)

    def positions(self, tenant: str, through: str) -> dict[str, int]:
        """The place (1: next) of each job waiting in the queue of the one whose
        ``backlog_key`` is ``through``, up to that one: one pass over the keys-only index,
        however many are asked about."""
        place: ConditionBase = Key("backlog_key").lte(through)
        if queue_of(through) is QueueKind.REPROCESS:
            place = Key("backlog_key").between(REPROCESS_PREFIX, through)
        query: QueryInputTableQueryTypeDef = {
            "IndexName": QUEUE_INDEX,
            "KeyConditionExpression": Key("tenant").eq(tenant) & place,
        }
        items = (item for page in self._pages(query) for item in page.get("Items", []))
        return {job_id_of(str(item["pk"])): n for n, item in enumerate(items, start=1)}

    # ---- every queue -------------------------------------------------------------------

    def census(self) -> Census:
        """Every queue the queue index lists waiting jobs in: how many, and the oldest's
        time (one pass over the keys-only index, thousands of waiting jobs a page)."""
        counts: dict[tuple[str, QueueKind], tuple[int, str]] = {}
        scan: ScanInputTableScanTypeDef = {
            "IndexName": QUEUE_INDEX,
            "ProjectionExpression": "#t, #b",
            "ExpressionAttributeNames": {"#t": "tenant", "#b": "backlog_key"},
        }
        with aws_errors("counting the backlog"):
            while True:
                page = self.table.scan(**scan)
                for item in page.get("Items", []):
                    key = str(item["backlog_key"])
                    where = (str(item["tenant"]), queue_of(key))
                    count, oldest = counts.get(where, (0, key))
                    counts[where] = (count + 1, min(oldest, key))
                if "LastEvaluatedKey" not in page:
                    break
                scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return Census(
            queues=[
                QueueCount(
                    tenant=tenant,
                    queue=queue,
                    waiting=count,
                    oldest_queued_at=queued_at_of(oldest),
                )
                for (tenant, queue), (count, oldest) in sorted(counts.items())
            ]
        )

    def repair(self, census: Census) -> list[LaneEntry]:
        """Put back in the lane every queue the census counts waiting jobs in whose lane
        item (read strongly) is out of it; the queues put back."""
        wanted = {(q.tenant, q.queue): q for q in census.queues}
        keys = [tenant_key(tenant, queue) for tenant, queue in wanted]
        in_lane = set()
        for item in self._batch_get(keys):
            if item.get("lane") == BACKLOG_LANE:
                entry = LaneEntry.model_validate(item)
                in_lane.add((entry.tenant, entry.queue))
        repaired = []
        for where in sorted(wanted.keys() - in_lane):
            self.mark(*where)
            repaired.append(LaneEntry(tenant=where[0], queue=where[1]))
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


def _in_queue(tenant: str, queue: QueueKind) -> ConditionBase:
    """The key condition of one of a tenant's queues on the queue index."""
    if queue is QueueKind.UPLOADS:
        return Key("tenant").eq(tenant) & Key("backlog_key").lt(REPROCESS_PREFIX)
    return Key("tenant").eq(tenant) & Key("backlog_key").begins_with(REPROCESS_PREFIX)
