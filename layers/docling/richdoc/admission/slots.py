"""The slot ledger: how many slots are held, by which jobs, taken and given back once.

One item holds the truth (``keys.ledger_key``): ``running`` (slots held), ``holders`` (job
id -> the run, slots and tenant of each holding) and ``version`` (one more at every
change). A tenant's share (``keys.share_key``) counts its jobs' slots (``running``). The
job item mirrors its holding (``slots``, ``slots_run``, ``admitted_at``; ``released_at``
once given back). A backlog's place in the lane is another item, its lane item
(``richdoc.admission.backlog``), which only single writes touch: the starter marks it
while a burst arrives, and a write to an item a transaction holds would be refused.

Every change is one ``TransactWriteItems`` over the ledger, the tenant and the job, each
conditional, so no interleaving of dispatchers, sweeps and retries can over-admit or
release twice:

* ``admit``: a waiting job takes one slot: the ledger has room (``running <= capacity -
  1``), the tenant has room, the job is still the waiting run it was (QUEUED, its run,
  its ``backlog_key``, holding nothing). It leaves the backlog in the same write.
* ``claim_shard_slots``: a running sharded job claims ``k`` more slots, free at that
  moment (never waited for: a job holding slots while it waits for more could deadlock
  with another).
* ``release``: the holder leaves the ledger and the counts fall by what it held;
  conditional on the holder entry, so a second release of the same holding changes
  nothing. The jobs table's stream triggers it when a holding job's run ends, whoever
  ended it (``richdoc.admission.dispatcher``); the sweep releases what that missed.

Since the ledger is one item read with one strongly consistent GetItem, the truth is
always at hand: ``running`` is the sum of the holders' slots by construction, and the
sweep checks each holder against its job (``richdoc.admission.reconcile``).

The ledger holds one entry per document in flight, and DynamoDB refuses an item past
400 KB. Sized as DynamoDB sizes items (``ledger_bytes``), an entry takes 118 bytes with a
16-character tenant and 1,126 at the worst (a tenant of 256 four-byte characters), so
``settings.MAX_CAPACITY`` (350) slots fit whatever the tenants. Every admission and
release rewrites the whole item, at two write units a kilobyte (a transaction's), and
one item takes at most 1,000 write units a second (a DynamoDB partition's): with
documents of a few seconds, slots past about 125 add turnover the ledger cannot take
(``richdoc deploy check`` warns; its "ledger" finding has the numbers).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict

from richdoc.admission.settings import AdmissionSettings
from richdoc.awserrors import aws_errors, cancellation_reasons, retry_conflicts
from richdoc.jobs import Job, JobStatus
from richdoc.jobs.keys import job_key, ledger_key, share_key
from richdoc.jobs.table import Update, conditional_check_failed

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

CONDITION_FAILED = "ConditionalCheckFailed"


class Holder(BaseModel):
    """One job's holding, as the ledger records it."""

    model_config = ConfigDict(frozen=True)

    run: int
    slots: int
    tenant: str
    admitted_at: str


class Ledger(BaseModel):
    """The ledger as read (a ledger never written reads as empty)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    running: int = 0
    holders: dict[str, Holder] = {}
    version: int = 0
    updated_at: str | None = None
    exists: bool = True

    def held_by(self, tenant: str) -> int:
        return sum(h.slots for h in self.holders.values() if h.tenant == tenant)


def client_token(requests: Sequence[TransactWriteItemTypeDef]) -> str:
    """A transaction's idempotency token: a digest of what it writes (DynamoDB takes 1 to
    36 characters)."""
    content = json.dumps(requests, sort_keys=True, default=str)
    return hashlib.sha256(content.encode()).hexdigest()[:36]


def ledger_bytes(ledger: Ledger) -> int:
    """The ledger item's size as DynamoDB counts it (its keys included): what must stay
    under the 400 KB item limit."""
    from richdoc.jobs.keys import ledger_key

    item = {
        **ledger_key(),
        "running": ledger.running,
        "holders": {job_id: h.model_dump() for job_id, h in ledger.holders.items()},
        "version": ledger.version,
        "updated_at": ledger.updated_at or "",
    }
    return sum(_attribute_bytes(name, value) for name, value in item.items())


def _attribute_bytes(name: str, value: object) -> int:
    """An attribute's size by DynamoDB's rules ("DynamoDB item sizes and formats"): its
    name's UTF-8 bytes, and a string's UTF-8 bytes, a number 1 byte per two significant
    digits and 1 more, a map 3 bytes and 1 more a member."""
    size = len(name.encode())
    if isinstance(value, dict):
        return size + 3 + sum(1 + _attribute_bytes(k, v) for k, v in value.items())
    if isinstance(value, int):
        digits = len(str(abs(value)).strip("0")) or 1
        return size + (digits + 1) // 2 + 1
    return size + len(str(value).encode())


class Handover(StrEnum):
    HANDED = "handed"  # released and admitted in one write
    GONE = "gone"  # the job no longer waits
    TENANT_FULL = "tenant_full"  # the job's tenant holds its share
    NOT_HELD = "not_held"  # the ledger no longer records the ended run's holding
    NOT_MIRRORED = "not_mirrored"  # the ended job's item does not say it holds them


class Admission(StrEnum):
    ADMITTED = "admitted"
    FULL = "full"  # every slot is held
    TENANT_FULL = "tenant_full"  # the tenant holds its share
    GONE = "gone"  # the job no longer waits (admitted, cancelled, deleted, moved on)


@dataclass
class _Item:
    """One update of a transaction, its expressions built with placeholders of its own."""

    key: Mapping[str, str]
    update: Update
    condition: str
    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)

    def request(self, table: str) -> TransactWriteItemTypeDef:
        args = self.update.args()
        names = {**args["ExpressionAttributeNames"], **self.names}
        values = {**args.get("ExpressionAttributeValues", {}), **self.values}
        update: dict[str, Any] = {
            "TableName": table,
            "Key": dict(self.key),
            "UpdateExpression": args["UpdateExpression"],
            "ConditionExpression": self.condition,
            "ExpressionAttributeNames": names,
        }
        if values:
            update["ExpressionAttributeValues"] = values
        return cast("TransactWriteItemTypeDef", {"Update": update})


@dataclass(frozen=True)
class _Taking:
    """A waiting job taking a slot: its holding, and the write to its item that takes it
    out of the backlog, conditional on its still being the waiting run it was."""

    job_id: str
    holder: Holder
    item: _Item


def _taking(job: Job, now: str) -> _Taking:
    assert job.tenant is not None and job.backlog_key is not None, "not a waiting job"
    item = _Item(
        job_key(job.job_id),
        Update()
        .set("slots", 1)
        .set("slots_run", job.run)
        .set("admitted_at", now)
        .set("updated_at", now)
        .remove("backlog_key"),
        "#cn = :cn AND #cs = :cs AND #cb = :cb AND attribute_not_exists(#cx)",
        {"#cn": "run", "#cs": "job_status", "#cb": "backlog_key", "#cx": "slots"},
        {":cn": job.run, ":cs": str(JobStatus.QUEUED), ":cb": job.backlog_key},
    )
    holder = Holder(run=job.run, slots=1, tenant=job.tenant, admitted_at=now)
    return _Taking(job.job_id, holder, item)


def _ledger_change(
    now: str,
    running: int,
    *,
    leaving: tuple[str, Holder] | None = None,
    entering: _Taking | None = None,
    room: int | None = None,
) -> _Item:
    """The ledger's part of a change: the holding ``leaving`` removed (conditional on the
    ledger recording it as it is), the one ``entering`` added (conditional on the job
    holding nothing yet), ``running`` added, within ``room`` (the most ``running`` may
    be before the change)."""
    update = Update().set("updated_at", now).add("running", running).add("version", 1)
    conditions: list[str] = []
    names = {"#ch": "holders"}
    values: dict[str, Any] = {}
    if leaving is not None:
        ended_id, holder = leaving
        update.remove(("holders", ended_id))
        conditions.append("#ch.#ce.#cn = :cn AND #ch.#ce.#cs = :cs")
        names |= {"#ce": ended_id, "#cn": "run", "#cs": "slots"}
        values |= {":cn": holder.run, ":cs": holder.slots}
    if entering is not None:
        update.set(("holders", entering.job_id), entering.holder.model_dump())
        if leaving is None:
            conditions.append("attribute_exists(#ch)")
        conditions.append("attribute_not_exists(#ch.#cj)")
        names["#cj"] = entering.job_id
    if room is not None:
        conditions.append("#cr <= :cl")
        names["#cr"] = "running"
        values[":cl"] = room
    return _Item(ledger_key(), update, " AND ".join(conditions), names, values)


def _share_gives_back(tenant: str, slots: int) -> _Item:
    """``tenant``'s share gives back ``slots``."""
    return _Item(
        share_key(tenant),
        Update().add("running", -slots),
        "attribute_exists(#cr)",
        {"#cr": "running"},
    )


def _given_back(job_id: str, holder: Holder, now: str) -> _Item:
    """The job's item stops mirroring the holding of ``holder``'s run."""
    return _Item(
        job_key(job_id),
        Update().remove("slots", "slots_run").set("released_at", now),
        "#cw = :cn",
        {"#cw": "slots_run"},
        {":cn": holder.run},
    )


class SlotLedger:
    """Admission's slot accounting over the jobs table (see the module's docstring)."""

    def __init__(self, table: Table, settings: AdmissionSettings, clock: Callable[[], str]) -> None:
        self.table = table
        self.settings = settings
        self.clock = clock

    # ---- reads -------------------------------------------------------------------------

    def read(self) -> Ledger:
        with aws_errors("reading the slot ledger"):
            item = self.table.get_item(Key=ledger_key(), ConsistentRead=True).get("Item")
        if item is None:
            return Ledger(exists=False)
        return Ledger.model_validate(item)

    def tenant_running(self, tenant: str) -> int:
        """The slots ``tenant``'s jobs hold."""
        with aws_errors("reading a tenant's share"):
            item = self.table.get_item(Key=share_key(tenant), ConsistentRead=True).get("Item")
        return int(cast(int, item.get("running", 0))) if item else 0

    def shares(self, tenants: Sequence[str]) -> dict[str, int]:
        """The slots each of ``tenants`` holds (one request for up to 100)."""
        client, name = self.table.meta.client, self.table.name
        held: dict[str, int] = dict.fromkeys(tenants, 0)
        for start in range(0, len(tenants), 100):
            keys = [share_key(t) for t in tenants[start : start + 100]]
            request: dict[str, Any] = {name: {"Keys": keys, "ConsistentRead": True}}
            while request:
                with aws_errors("reading tenants' shares"):
                    answer = client.batch_get_item(RequestItems=request)
                for item in answer["Responses"].get(name, []):
                    tenant = str(item["pk"]).split("#", 1)[1]
                    held[tenant] = int(cast(int, item.get("running", 0)))
                request = dict(answer.get("UnprocessedKeys") or {})
        return held

    def ensure(self) -> None:
        """Create the empty ledger, unless it exists."""
        item: dict[str, Any] = {**ledger_key(), "running": 0, "holders": {}, "version": 0}
        try:
            with aws_errors("creating the slot ledger"):
                retry_conflicts(
                    self.table.put_item, Item=item, ConditionExpression="attribute_not_exists(pk)"
                )
        except ClientError as exc:
            if not conditional_check_failed(exc):
                raise

    # ---- changes -----------------------------------------------------------------------

    def admit(self, job: Job) -> Admission:
        """One slot for the waiting ``job``, if the ledger and its tenant have room."""
        now = self.clock()
        taking = _taking(job, now)
        items = [
            _ledger_change(now, 1, entering=taking, room=self.settings.capacity - 1),
            self._share_takes(taking.holder.tenant),
            taking.item,
        ]
        reasons = self._transact(items, "admitting a job")
        if not reasons:
            return Admission.ADMITTED
        if reasons[2] == CONDITION_FAILED:
            return Admission.GONE
        if reasons[0] == CONDITION_FAILED:
            return Admission.FULL
        return Admission.TENANT_FULL

    def claim_shard_slots(self, job: Job, wanted: int) -> int:
        """Up to ``wanted`` more slots for the running ``job`` (its shards), as many as are
        free now; how many it took (0 when none are, or the job holds none)."""
        for _ in range(3):  # a change by someone else between the read and the write
            ledger = self.read()
            holder = ledger.holders.get(job.job_id)
            if holder is None or holder.run != job.run or wanted <= 0:
                return 0
            free = self.settings.capacity - ledger.running
            tenant_free = self.settings.per_tenant - self.tenant_running(holder.tenant)
            extra = min(wanted, free, tenant_free)
            if extra <= 0:
                return 0
            now = self.clock()
            items = [
                _Item(
                    ledger_key(),
                    Update()
                    .set(("holders", job.job_id, "slots"), holder.slots + extra)
                    .set("updated_at", now)
                    .add("running", extra)
                    .add("version", 1),
                    "#ch.#cj.#cn = :cn AND #ch.#cj.#cs = :cs AND #cr <= :cl",
                    {
                        "#ch": "holders",
                        "#cj": job.job_id,
                        "#cn": "run",
                        "#cs": "slots",
                        "#cr": "running",
                    },
                    {
                        ":cn": job.run,
                        ":cs": holder.slots,
                        ":cl": self.settings.capacity - extra,
                    },
                ),
                self._share_takes(holder.tenant, extra),
                _Item(
                    job_key(job.job_id),
                    Update().add("slots", extra),
                    "#cn = :cn AND #cw = :cn AND #cs = :cs",
                    {"#cn": "run", "#cw": "slots_run", "#cs": "job_status"},
                    {":cn": job.run, ":cs": str(JobStatus.RUNNING)},
                ),
            ]
            reasons = self._transact(items, "claiming slots for shards")
            if not reasons:
                return extra
            if reasons[2] == CONDITION_FAILED:
                return 0  # the run ended or moved on: its slots are being released
        return 0

    def release(self, job_id: str, holder: Holder) -> bool:
        """Give back what ``holder`` holds for ``job_id``; False when it was given back
        already (or the ledger records another holding now)."""
        now = self.clock()
        ledger = _ledger_change(now, -holder.slots, leaving=(job_id, holder))
        share = _share_gives_back(holder.tenant, holder.slots)
        mirror = _given_back(job_id, holder, now)
        reasons = self._transact([ledger, share, mirror], "releasing slots")
        if reasons and reasons[2] == CONDITION_FAILED and reasons[0] != CONDITION_FAILED:
            # The job item no longer mirrors the holding (it expired, or was written
            # over by hand): the ledger is the truth, release it there.
            reasons = self._transact([ledger, share], "releasing slots")
        return not reasons

    def hand_over(self, ended_id: str, holder: Holder, job: Job) -> Handover:
        """Give back what ``holder`` holds for the run of ``ended_id`` and admit the
        waiting ``job`` into one of those slots, in one transaction: the slot is never
        seen free. Its items are the release's and the admission's, and so are its
        conditions (the ledger holds ``holder``; ``job`` still waits, and its tenant has
        room); a tenant handing a slot to itself changes its share by the difference."""
        now = self.clock()
        taking = _taking(job, now)
        tenant = taking.holder.tenant
        ledger = _ledger_change(now, 1 - holder.slots, leaving=(ended_id, holder), entering=taking)
        shares = []
        if holder.tenant != tenant:
            shares = [_share_gives_back(holder.tenant, holder.slots), self._share_takes(tenant)]
        elif holder.slots != 1:
            shares = [_share_gives_back(tenant, holder.slots - 1)]
        ended = _given_back(ended_id, holder, now)
        items = [ledger, *shares, ended, taking.item]
        reasons = self._transact(items, "handing a slot over")
        if not reasons:
            return Handover.HANDED
        if reasons[-1] == CONDITION_FAILED:
            return Handover.GONE
        if reasons[0] == CONDITION_FAILED:
            return Handover.NOT_HELD
        if len(shares) == 2 and reasons[2] == CONDITION_FAILED:
            return Handover.TENANT_FULL
        return Handover.NOT_MIRRORED  # the ended job's item no longer mirrors the holding

    def _share_takes(self, tenant: str, slots: int = 1) -> _Item:
        """``tenant``'s share takes ``slots`` more, if it has room for them."""
        return _Item(
            share_key(tenant),
            Update().set("tenant", tenant).add("running", slots),
            "attribute_not_exists(#cr) OR #cr <= :cl",
            {"#cr": "running"},
            {":cl": self.settings.per_tenant - slots},
        )

    def recount(self, ledger: Ledger, tenants: Mapping[str, int]) -> bool:
        """Set the ledger's ``running`` and these tenants' counts (tenant -> the count it
        had when read) to what the holders add up to, if nothing changed since ``ledger``
        was read; whether it wrote."""
        truth = sum(h.slots for h in ledger.holders.values())
        items = [
            _Item(
                ledger_key(),
                Update().set("running", truth).set("updated_at", self.clock()).add("version", 1),
                "#cv = :cv",
                {"#cv": "version"},
                {":cv": ledger.version},
            )
        ]
        items += [
            _Item(
                share_key(tenant),
                Update().set("running", ledger.held_by(tenant)),
                "#cr = :cr",
                {"#cr": "running"},
                {":cr": seen},
            )
            for tenant, seen in tenants.items()
        ]
        return not self._transact(items, "recounting slots")

    def _transact(self, items: Sequence[_Item], what: str) -> list[str]:
        """Write ``items`` in one transaction: [] when it committed, else the reason of
        each item (``ConditionalCheckFailed`` where a condition did not hold). Conflicts
        with other transactions are retried; what keeps conflicting is ``Transient``.

        The transaction carries a ``ClientRequestToken`` made of its content (every
        change holds the clock's moment, so no two changes share one): the same request
        sent again within ten minutes, after an answer that was lost, changes nothing
        again, and DynamoDB answers it as it answered the first."""
        requests = [item.request(self.table.name) for item in items]
        token = client_token(requests)
        try:
            with aws_errors(what):
                retry_conflicts(
                    self.table.meta.client.transact_write_items,
                    TransactItems=requests,
                    ClientRequestToken=token,
                )
        except ClientError as exc:
            reasons = cancellation_reasons(exc)
            if CONDITION_FAILED in reasons:
                return reasons
            raise
        return []
