"""The dead-letter queue worked message by message
(``richdoc_tools.ops.dead_letter_queue``): listed from the job records without receiving,
chosen messages redriven or discarded with a recorded reason, the rest left where they
were."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from richdoc_tools.ops.dead_letter_queue.acting import redrive_chosen, take
from richdoc_tools.ops.dead_letter_queue.reading import (
    list_dead_letters,
    peek,
    peek_listing,
    queue_depth,
    waiting_dead_letters,
)

from richdoc.deadletter import failure_attributes
from richdoc.jobs import DeadLetterMark, Job, JobStatus, JobStore, StaleRun, job_key
from richdoc.taxonomy import Failure, FailureKind
from tests.support.records import SOURCE


@pytest.fixture
def queues(aws: None) -> tuple[Any, str, str]:
    sqs = boto3.client("sqs")
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    ingest = sqs.create_queue(QueueName="ingest")["QueueUrl"]
    return sqs, dlq, ingest


def _dead_letter(sqs: Any, dlq: str, job_id: str, kind: FailureKind) -> str:
    attributes = failure_attributes(job_id, 1, Failure(kind, f"{job_id} failed"))
    sent = sqs.send_message(
        QueueUrl=dlq, MessageBody='{"Records": []}', MessageAttributes=attributes
    )
    message_id: str = sent["MessageId"]
    return message_id


def _receive_counts(sqs: Any, url: str) -> dict[str, int]:
    return {d.message_id: d.receive_count for d in peek(sqs, url)}


def test_chosen_messages_are_redriven_and_the_others_stay_visible(
    queues: tuple[Any, str, str],
) -> None:
    sqs, dlq, ingest = queues
    ids = [_dead_letter(sqs, dlq, f"job-{n}", FailureKind.TRANSIENT) for n in range(5)]
    taken = redrive_chosen(sqs, dlq, ingest, [ids[1], ids[3], "not-on-the-queue"])
    assert sorted(taken.done) == sorted([ids[1], ids[3]])
    assert taken.missing == ["not-on-the-queue"]
    assert queue_depth(sqs, dlq).waiting == 3  # released at once, not after a timeout
    assert sorted(_receive_counts(sqs, dlq)) == sorted([ids[0], ids[2], ids[4]])
    moved = sqs.receive_message(
        QueueUrl=ingest, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    )["Messages"]
    assert sorted(m["MessageAttributes"]["richdoc.job_id"]["StringValue"] for m in moved) == [
        "job-1",
        "job-3",
    ]


def test_an_action_deletes_only_the_messages_it_accepted(queues: tuple[Any, str, str]) -> None:
    sqs, dlq, _ = queues
    keep, drop = (_dead_letter(sqs, dlq, f"job-{n}", FailureKind.CORRUPT_INPUT) for n in (1, 2))
    recorded: list[str] = []

    def record(letter: Any, message: Any) -> bool:
        recorded.append(letter.job_id)
        return bool(letter.job_id == "job-2")

    taken = take(sqs, dlq, [keep, drop], record)
    assert taken.done == [drop] and taken.declined == [keep] and taken.missing == []
    assert sorted(recorded) == ["job-1", "job-2"]
    assert list(_receive_counts(sqs, dlq)) == [keep]


def test_counting_the_queue_receives_nothing(queues: tuple[Any, str, str]) -> None:
    sqs, dlq, _ = queues
    _dead_letter(sqs, dlq, "job-1", FailureKind.TRANSIENT)
    assert queue_depth(sqs, dlq).total == 1
    assert queue_depth(sqs, dlq).total == 1
    [letter] = peek(sqs, dlq)
    assert letter.receive_count == 1  # only the peek received it


def _dead_lettered_job(table: Any, n: int, kind: FailureKind, message_id: str) -> Job:
    job = Job(
        job_id=f"{n:032x}",
        status=JobStatus.DEAD_LETTERED,
        run=1,
        source=SOURCE,
        failure=Failure(kind, "r"),
        dead_letter=DeadLetterMark(message_id=message_id, sent_by="state-machine"),
        created_at=f"2026-01-01T00:00:0{n}.000+00:00",
        updated_at=f"2026-01-01T00:00:0{n}.000+00:00",
    )
    table.put_item(Item={**job_key(job.job_id), **job.to_item()})
    return job


def test_the_waiting_dead_letters_come_from_the_records_and_a_discard_is_recorded(
    jobs_table: Any, job_store: JobStore
) -> None:
    corrupt = _dead_lettered_job(jobs_table, 1, FailureKind.CORRUPT_INPUT, "m-1")
    transient = _dead_lettered_job(jobs_table, 2, FailureKind.TRANSIENT, "m-2")
    assert {j.job_id for j in waiting_dead_letters(job_store)} == {
        corrupt.job_id,
        transient.job_id,
    }
    assert [j.job_id for j in waiting_dead_letters(job_store, kind="transient")] == [
        transient.job_id
    ]

    with pytest.raises(StaleRun):  # another message: the record is not this one's
        job_store.record_discard(corrupt.job_id, 1, "m-other", "duplicate upload")
    discarded = job_store.record_discard(corrupt.job_id, 1, "m-1", "a corrupt scan: re-upload")
    assert discarded.status is JobStatus.DEAD_LETTERED
    assert discarded.dead_letter is not None
    assert discarded.dead_letter.discard_reason == "a corrupt scan: re-upload"
    assert discarded.dead_letter.discarded_at
    assert [j.job_id for j in waiting_dead_letters(job_store)] == [transient.job_id]
    # The printed record shows the discard; a record without one keeps its shape.
    printed = discarded.to_dict()["dead_letter"]
    assert isinstance(printed, dict)
    assert set(printed) == {
        "message_id",
        "sent_by",
        "discarded_at",
        "discard_reason",
    }
    assert transient.to_dict()["dead_letter"] == {"message_id": "m-2", "sent_by": "state-machine"}


def test_the_listing_reads_the_records_and_counts_the_others_without_receiving(
    queues: tuple[Any, str, str], jobs_table: Any, job_store: JobStore
) -> None:
    sqs, dlq, _ = queues
    message_id = _dead_letter(sqs, dlq, f"{1:032x}", FailureKind.CORRUPT_INPUT)
    recorded = _dead_lettered_job(jobs_table, 1, FailureKind.CORRUPT_INPUT, message_id)
    sqs.send_message(QueueUrl=dlq, MessageBody="not json")  # SQS moved it: no record

    listing = list_dead_letters(job_store, sqs, dlq)
    [letter] = listing.letters
    assert (letter.message_id, letter.job_id, letter.run) == (message_id, recorded.job_id, 1)
    assert (letter.kind, letter.reason, letter.feature) == ("corrupt_input", "r", None)
    assert letter.receive_count is None and not letter.received
    assert listing.others == 1 and not listing.received
    assert queue_depth(sqs, dlq).waiting == 2  # nothing was received, nothing hidden

    peeked = peek_listing(sqs, dlq)
    assert peeked.received and peeked.others == 0
    assert sorted(d.kind for d in peeked.letters) == ["corrupt_input", "malformed"]
    assert {d.receive_count for d in peeked.letters} == {1}  # the peek was the first receive
