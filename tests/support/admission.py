"""Reading admission's records back, for the end-to-end tests and the benchmark: how many
slots were held at every moment (the ledger's own history, from the jobs table's stream,
and the jobs' admitted and released times), and whether every slot came back; and a
backlog written straight to the table (``waiting_job_item``), as uploads leave it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from richdoc.admission.backlog import Backlog
from richdoc.admission.slots import Ledger
from richdoc.contracts import JobOptions, SourceObject
from richdoc.jobs import Job, JobStatus, timestamp
from richdoc.jobs.keys import backlog_key, job_key, ledger_key
from richdoc.jobs.phase import JobPhase

# An upload's ingest message as the starter keeps it on its job (about 1 KB).
INGEST_MESSAGE = json.dumps({"Records": [{"eventSource": "aws:s3", "padding": "x" * 900}]})


def waiting_job_item(n: int, queued_at: datetime, tenant: str = "acme") -> dict[str, Any]:
    """The item of the ``n``-th job waiting in ``tenant``'s backlog since ``queued_at``
    plus ``n`` milliseconds, as the starter writes it (its id: ``n`` in hexadecimal)."""
    job_id = f"{n:032x}"
    queued = timestamp(queued_at + timedelta(milliseconds=n))
    job = Job(
        job_id=job_id,
        status=JobStatus.QUEUED,
        phase=JobPhase.QUEUED,
        run=1,
        source=SourceObject(bucket="ingest", key=f"{tenant}/{n:05d}.pdf", version_id="v1", size=9),
        options=JobOptions(),
        message=INGEST_MESSAGE,
        execution_arn=f"arn:aws:states:us-east-1:123456789012:execution:pipeline:{job_id}-r1",
        created_at=queued,
        updated_at=queued,
        tenant=tenant,
        queued_at=queued,
        backlog_key=backlog_key(queued, job_id),
    )
    return {**job_key(job_id), **job.to_item(), "attempt_seq": 0, "attempt_counts": {}}


def ledger(stack: Any) -> Ledger:
    item = stack.jobs.table.get_item(Key=ledger_key(), ConsistentRead=True).get("Item")
    return Ledger.model_validate(item) if item else Ledger(exists=False)


def ledger_history(stack: Any) -> list[int]:
    """``running`` in every version of the ledger the table's stream recorded, in order:
    each admission and each release is one."""
    streams = stack.client("dynamodbstreams")
    arn = stack.client("dynamodb").describe_table(TableName=stack.outputs["JobsTableName"])[
        "Table"
    ]["LatestStreamArn"]
    [shard] = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    key = ledger_key()
    values: list[int] = []
    while iterator:
        answer = streams.get_records(ShardIterator=iterator, Limit=1000)
        for record in answer.get("Records", []):
            keys = record["dynamodb"].get("Keys", {})
            image = record["dynamodb"].get("NewImage")
            if image and (keys["pk"]["S"], keys["sk"]["S"]) == (key["pk"], key["sk"]):
                values.append(int(TypeDeserializer().deserialize(image["running"])))
        if not answer.get("Records"):
            break
        iterator = answer.get("NextShardIterator")
    return values


def most_at_once(jobs: Iterable[Job]) -> int:
    """The most jobs holding slots at one moment, by their admitted and released times (a
    release at the moment of an admission counts first: the admission waited for it)."""
    moments: list[tuple[str, int]] = []
    for job in jobs:
        assert job.admitted_at is not None and job.released_at is not None, job
        moments += [(job.admitted_at, 1), (job.released_at, -1)]
    held = most = 0
    for _, change in sorted(moments):
        held += change
        most = max(most, held)
    return most


def slots_back(stack: Any) -> bool:
    """Every slot is back: the ledger holds none (an awaitable condition)."""
    state = ledger(stack)
    return state.running == 0 and not state.holders


def admission_state(stack: Any, job_id: str) -> str:
    """What admission knows of a job that has not moved, for a failed wait's message: the
    job's status, stage and place in the backlog, the slots held and by whom, the lane."""
    job = stack.jobs.get(job_id)
    where = "no job record"
    if job is not None:
        where = (
            f"{job.status} run {job.run} stage {job.stage} tenant {job.tenant!r} "
            f"backlog_key {job.backlog_key!r} admitted_at {job.admitted_at!r} "
            f"slots {job.slots} (run {job.slots_run})"
        )
    held = ledger(stack)
    holders = {holder: (h.run, h.slots, h.tenant) for holder, h in held.holders.items()}
    lane = [t.tenant for t in Backlog(stack.jobs.table, stack.jobs.clock).entries()]
    return f"job {job_id}: {where}; ledger running {held.running}, holders {holders}; lane {lane}"
