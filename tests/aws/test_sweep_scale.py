"""The sweep with 10,000 jobs waiting in the backlog longer than the workflow timeout: it
finishes within its function's limits and still closes a stuck run.

The jobs are written straight to the table (as 10,000 uploads would leave them, their
records four hours old: the clock compressed), the sweep is the records function's
(``Backstops.sweep``) against moto as the embedded stack runs it. Its limits are its
function's, 60 s and 256 MB (template.yaml), measured as work, never as this machine's
time: the invocation's remaining time is spent by each DynamoDB request at a latency far
above DynamoDB's (``REQUEST_MS``), and what the function holds at once is the items
DynamoDB answers it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Logger
from richdoc_tools.local.moto_fixes.speed import dynamodb_transaction_rollback

from richdoc.admission.backlog import Backlog
from richdoc.admission.reconcile import SlotAudit
from richdoc.admission.settings import AdmissionSettings
from richdoc.admission.slots import SlotLedger
from richdoc.contracts import JobOptions, SourceObject
from richdoc.jobs import JobStatus, JobStore, timestamp
from richdoc.records.backstops import Backstops
from richdoc.records.calls import ScheduledSweep, Swept
from richdoc.records.sweep_walk import SweepWalk, TimeBudget, Unlimited
from tests.support.admission import INGEST_MESSAGE, waiting_job_item

WAITING = 10_000
TIMEOUT_MS = 60_000  # the records function's Timeout (template.yaml)
# Each DynamoDB request takes this much of the invocation's time: a 1 MB page read by
# DynamoDB takes tens of milliseconds; this is a throttled one retried, many times over.
REQUEST_MS = 3_000
WORKFLOW_TIMEOUT = timedelta(hours=3)
QUEUED_AT = datetime(2026, 1, 1, tzinfo=UTC)
SWEPT_AT = QUEUED_AT + timedelta(hours=4)


@pytest.fixture
def moto_as_the_stack_runs_it(jobs_table: Any) -> Iterator[None]:
    """moto as the embedded stack runs it (a transaction rolls back its own items, not
    the whole table: ten thousand jobs here)."""
    with contextlib.ExitStack() as exit_stack:
        dynamodb_transaction_rollback.install(exit_stack)
        yield


@dataclass
class Work:
    """The DynamoDB requests the sweep made, and the most items one answer held."""

    requests: int = 0
    largest_answer: int = 0

    def remaining_ms(self) -> int:
        return TIMEOUT_MS - self.requests * REQUEST_MS

    def count(self, parsed: dict[str, Any], **_: Any) -> None:
        self.requests += 1
        self.largest_answer = max(self.largest_answer, len(parsed.get("Items", [])))


def _sweep(backstops: Backstops, table: Any) -> tuple[Swept, Work]:
    """One invocation of the sweep, its work counted."""
    work = Work()
    events = table.meta.client.meta.events
    events.register("after-call.dynamodb", work.count)
    try:
        event = ScheduledSweep.model_validate(
            {"detail-type": "Scheduled Event", "source": "aws.events", "time": SWEPT_AT}
        )
        swept = backstops.sweep(event, TimeBudget.of_invocation(work.remaining_ms))
    finally:
        events.unregister("after-call.dynamodb", work.count)
    return swept, work


def test_the_sweep_walks_10000_waiting_jobs_within_its_limits_and_closes_a_stuck_run(
    jobs_table: Any, moto_as_the_stack_runs_it: None
) -> None:
    jobs = JobStore(jobs_table, clock=lambda: timestamp(QUEUED_AT))
    with jobs_table.batch_writer() as batch:
        for n in range(WAITING):
            batch.put_item(Item=waiting_job_item(n, QUEUED_AT))
    # A run stuck since just after them (behind them in the index): admitted, its
    # execution never started, its slot released since.
    stuck = "f" * 32
    source = SourceObject(bucket="ingest", key="acme/stuck.pdf", version_id="v1")
    late = JobStore(jobs_table, clock=lambda: timestamp(QUEUED_AT + timedelta(minutes=1)))
    assert late.create(stuck, source, JobOptions(), message=INGEST_MESSAGE)
    sqs = boto3.client("sqs")
    dead_letters = sqs.create_queue(QueueName="dead-letters")["QueueUrl"]
    ledger = SlotLedger(jobs_table, AdmissionSettings.of(20), jobs.clock)
    backstops = Backstops(
        jobs=jobs,
        sqs=sqs,
        sfn=boto3.client("stepfunctions"),
        dead_letter_queue_url=dead_letters,
        logger=Logger(service="sweep-test"),
        workflow_timeout_s=int(WORKFLOW_TIMEOUT.total_seconds()),
        audit=SlotAudit(ledger=ledger, backlog=Backlog(jobs_table, jobs.clock), jobs=jobs),
    )

    passes: list[tuple[Swept, Work]] = []
    while not passes or not passes[-1][0].walked:
        passes.append(_sweep(backstops, jobs_table))
        assert len(passes) <= 5, "each sweep goes on where the last stopped"
    for _, work in passes:
        # Within its limits: it stops taking work with half its time left, then makes
        # the requests of the job under way and saves where it stopped.
        assert work.remaining_ms() >= TIMEOUT_MS // 2 - 8 * REQUEST_MS
        # What it holds at once is one answer of DynamoDB's: the waiting jobs are left
        # out by the query's filter, never received.
        assert work.largest_answer <= 1
    # Its budget ran out before the walk's end, and each sweep went on from where the
    # last stopped: no page read again but where one stopped.
    assert len(passes) >= 2 and not passes[0][0].walked
    whole = SweepWalk(jobs, SWEPT_AT - WORKFLOW_TIMEOUT, Unlimited())
    assert list(whole.candidates()) == [] and whole.finished
    total = sum(swept.index_pages for swept, _ in passes)
    assert whole.index_pages <= total < whole.index_pages + len(passes)
    assert sum(swept.read for swept, _ in passes) == 1  # the stuck run, and no other
    assert sum(swept.closed for swept, _ in passes) == 1
    closed = jobs.get(stuck)
    assert closed is not None and closed.status is JobStatus.DEAD_LETTERED
    assert closed.failure is not None and closed.failure.error == "Execution.NOT_STARTED"
    # The waiting jobs wait on.
    sample = jobs.get_many(f"{n:032x}" for n in range(0, WAITING, 997))
    assert all(job.waiting for job in sample.values()) and len(sample) == 11
