"""The backlog: jobs waiting for a slot, tenant by tenant, in the order they came.

A waiting job is its own queue entry: a QUEUED job item carries ``backlog_key``
(``<queued at>#<job id>``: its upload's time, or its redrive's) only while it waits, and
the sparse index ``by-queue`` (``tenant``, ``backlog_key``; keys only) lists each tenant's
waiting jobs oldest first. A job leaves it in the write that admits, cancels, deletes or
closes its run. Nothing is received or polled: waiting costs the item's storage, for as
long as the record is kept.

Tenants with waiting jobs are found through their items' ``lane`` (set by whoever queues
a job, before the job waits: the starter, a redrive, a reprocess; the job's write wakes
the dispatcher, which must find its tenant) in the sparse index ``tenants-by-service``
(``lane``, ``last_served``): the least recently served tenant first. The dispatcher
clears a tenant's lane when it finds its queue empty, unless the lane was set within
``LANE_GRACE_S`` (the index is eventually consistent: a job just queued may not show yet);
the sweep sets it again for any tenant the index shows waiting jobs for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.jobs import Job, timestamp
from richdoc.jobs.keys import LANE_INDEX, QUEUE_INDEX, tenant_key
from richdoc.jobs.table import conditional_check_failed

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import (
        QueryInputTableQueryTypeDef,
        QueryOutputTableTypeDef,
    )

# The lane's one value: the index is sparse on its presence.
BACKLOG_LANE = "backlog"
# A tenant never served sorts first.
NEVER_SERVED = "0"
# How long a lane set by a new job is kept even when the tenant's queue reads empty.
LANE_GRACE_S = 60


class TenantState(BaseModel):
    """A tenant's place in the lane, as the lane index shows it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    tenant: str
    last_served: str = NEVER_SERVED
    marked_at: str | None = None


class Backlog:
    """The waiting jobs and the tenants they wait for (see the module's docstring)."""

    def __init__(self, table: Table, clock: Callable[[], str]) -> None:
        self.table = table
        self.clock = clock

    # ---- tenants -----------------------------------------------------------------------

    def mark(self, tenant: str) -> None:
        """``tenant`` has a job waiting: it joins the lane (keeping its place by when it
        was last served)."""
        with aws_errors("marking a tenant's backlog"):
            retry_conflicts(
                self.table.update_item,
                Key=tenant_key(tenant),
                UpdateExpression="SET #t = :t, #l = :l, #m = :m, #s = if_not_exists(#s, :never)",
                ExpressionAttributeNames={
                    "#t": "tenant",
                    "#l": "lane",
                    "#m": "marked_at",
                    "#s": "last_served",
                },
                ExpressionAttributeValues={
                    ":t": tenant,
                    ":l": BACKLOG_LANE,
                    ":m": self.clock(),
                    ":never": NEVER_SERVED,
                },
            )

    def served(self, tenant: str) -> None:
        """``tenant`` was just served: it goes to the back of the lane."""
        with aws_errors("recording a tenant's turn"):
            retry_conflicts(
                self.table.update_item,
                Key=tenant_key(tenant),
                UpdateExpression="SET #s = :s",
                ExpressionAttributeNames={"#s": "last_served"},
                ExpressionAttributeValues={":s": self.clock()},
            )

    def tenants(self) -> list[TenantState]:
        """The tenants in the lane, least recently served first."""
        items = self._query(
            {"IndexName": LANE_INDEX, "KeyConditionExpression": Key("lane").eq(BACKLOG_LANE)}
        )
        return [TenantState.model_validate(item) for item in items]

    def clear(self, tenant: TenantState, now: datetime) -> bool:
        """Take ``tenant`` out of the lane (its queue read empty), unless a job was queued
        for it within the grace period; whether it was taken out."""
        cutoff = timestamp(now - timedelta(seconds=LANE_GRACE_S))
        try:
            with aws_errors("clearing a tenant's backlog"):
                retry_conflicts(
                    self.table.update_item,
                    Key=tenant_key(tenant.tenant),
                    UpdateExpression="REMOVE #l",
                    ConditionExpression=Attr("marked_at").lt(cutoff),
                    ExpressionAttributeNames={"#l": "lane"},
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                return False
            raise
        return True

    # ---- a tenant's queue --------------------------------------------------------------

    def oldest(self, tenant: str, limit: int) -> list[str]:
        """The ids of the tenant's ``limit`` oldest waiting jobs, oldest first (the index
        lags the table: a job may have been admitted or cancelled since)."""
        with aws_errors("reading a tenant's backlog"):
            page = self.table.query(
                IndexName=QUEUE_INDEX,
                KeyConditionExpression=Key("tenant").eq(tenant),
                Limit=limit,
            )
        return [_job_id(item) for item in page.get("Items", [])]

    def position(self, job: Job) -> int | None:
        """The job's place in its tenant's queue (1: next); None when it is not waiting."""
        if not job.waiting or job.tenant is None or job.backlog_key is None:
            return None
        ahead = self._count(Key("tenant").eq(job.tenant) & Key("backlog_key").lt(job.backlog_key))
        return ahead + 1

    def positions(self, tenant: str, through: str) -> dict[str, int]:
        """The place (1: next) of each of the tenant's waiting jobs up to the one whose
        ``backlog_key`` is ``through``: one pass over the keys-only index, however many
        are asked about."""
        query: QueryInputTableQueryTypeDef = {
            "IndexName": QUEUE_INDEX,
            "KeyConditionExpression": Key("tenant").eq(tenant) & Key("backlog_key").lte(through),
        }
        items = (item for page in self._pages(query) for item in page.get("Items", []))
        return {_job_id(item): place for place, item in enumerate(items, start=1)}

    def depth(self, tenant: str) -> int:
        """How many jobs wait for ``tenant``."""
        return self._count(Key("tenant").eq(tenant))

    def oldest_queued_at(self, tenant: str) -> str | None:
        """When the tenant's oldest waiting job was queued."""
        with aws_errors("reading a tenant's backlog"):
            page = self.table.query(
                IndexName=QUEUE_INDEX, KeyConditionExpression=Key("tenant").eq(tenant), Limit=1
            )
        items = page.get("Items", [])
        return str(items[0]["backlog_key"]).rsplit("#", 1)[0] if items else None

    def waiting_tenants(self) -> set[str]:
        """Every tenant the queue index shows a waiting job for (a scan of the keys-only
        index: the sweep's check of the lane)."""
        found: set[str] = set()
        with aws_errors("scanning the backlog"):
            scan: dict[str, object] = {
                "IndexName": QUEUE_INDEX,
                "ProjectionExpression": "#t",
                "ExpressionAttributeNames": {"#t": "tenant"},
            }
            while True:
                page = self.table.scan(**scan)  # type: ignore[arg-type]
                found.update(str(item["tenant"]) for item in page.get("Items", []))
                if "LastEvaluatedKey" not in page:
                    return found
                scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _count(self, condition: ConditionBase) -> int:
        query: QueryInputTableQueryTypeDef = {
            "IndexName": QUEUE_INDEX,
            "KeyConditionExpression": condition,
            "Select": "COUNT",
        }
        return sum(int(page.get("Count", 0)) for page in self._pages(query))

    def _query(self, query: QueryInputTableQueryTypeDef) -> list[dict[str, Any]]:
        return [dict(item) for page in self._pages(query) for item in page.get("Items", [])]

    def _pages(self, query: QueryInputTableQueryTypeDef) -> Iterator[QueryOutputTableTypeDef]:
        with aws_errors("querying the backlog"):
            while True:
                page = self.table.query(**query)
                yield page
                if "LastEvaluatedKey" not in page:
                    return
                query["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _job_id(item: object) -> str:
    """The job id of a queue index entry (its table key, ``JOB#<id>``)."""
    pk = str(cast(dict[str, object], item)["pk"])
    return pk.split("#", 1)[1]
