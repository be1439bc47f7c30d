"""A stack's completion events for operators: read back from the event log, and published
again for jobs whose events were lost.

Every event on the stack's bus is also a line of its event log group (a rule of the stack
targets it), so ``tail`` reads what was published without a subscription of its own:
FilterLogEvents from a moment on, each line one EventBridge event, checked against the
published model (``richdoc_client.events.CompletionEvent``); a line that is not one is
reported, never dropped silently.

``republish`` is the way back from the notifier's failures: for each job whose run has
ended it refreshes the document's manifest and publishes the run's completion event
again, exactly as the notifier does (the same ``event_id``: consumers that saw it drop
it). ``republish_failed`` finds those jobs itself: each batch the notifier's stream
stopped retrying is an object of the stack's NotifyFailureBucket (Lambda's record of the
invocation, with its payload: the job changes, images and all) and a message on
NotifyFailureQueue naming it; each message's jobs are republished, then the message is
deleted (the object stays until the bucket's lifecycle expires it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote_plus

from boto3.dynamodb.types import TypeDeserializer
from pydantic import ValidationError

from richdoc.jobs.keys import JOB_SK
from richdoc.manifests import ManifestKeeper
from richdoc.notifier import Notifier
from richdoc_client.events import CompletionDetail, CompletionEvent
from richdoc_tools.ops.jobs import find_jobs

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient

    from richdoc_tools.ops.operator import Operator


class NoEventLog(LookupError):
    """The stack has no event bus or event log (deployed before completion events)."""


@dataclass(frozen=True)
class LoggedEvent:
    """One line of the event log: the event, or why the line is not one."""

    at_ms: int  # when CloudWatch Logs took the line
    log_event_id: str
    event: CompletionEvent | None
    unreadable: str | None = None  # the line's start, when it is not a completion event


def read_log(logs: CloudWatchLogsClient, log_group: str, *, since: datetime) -> list[LoggedEvent]:
    """The log's events from ``since`` on, oldest first."""
    found: list[LoggedEvent] = []
    pages = logs.get_paginator("filter_log_events").paginate(
        logGroupName=log_group, startTime=int(since.timestamp() * 1000)
    )
    for page in pages:
        for line in page.get("events", []):
            message = line.get("message", "")
            at_ms, log_id = int(line.get("timestamp", 0)), str(line.get("eventId", ""))
            try:
                event = CompletionEvent.model_validate(json.loads(message))
            except (ValueError, ValidationError):
                found.append(LoggedEvent(at_ms, log_id, None, unreadable=message[:200]))
                continue
            found.append(LoggedEvent(at_ms, log_id, event))
    found.sort(key=lambda e: (e.at_ms, e.log_event_id))
    return found


def tail(
    operator: Operator, *, since: datetime, follow: bool = False, interval_s: float = 2.0
) -> Iterator[LoggedEvent]:
    """The stack's completion events from ``since`` on; with ``follow``, then each new
    one as it is logged (the log is read again every ``interval_s``), for as long as the
    caller takes them."""
    log_group = operator.resources.event_log_group
    if not log_group:
        raise NoEventLog(
            f"stack {operator.resources.stack_name!r} has no event log group "
            "(EventLogGroupName output): deploy the current template"
        )
    seen: set[str] = set()
    start = since
    while True:
        for logged in read_log(operator.logs, log_group, since=start):
            if logged.log_event_id in seen:
                continue
            seen.add(logged.log_event_id)
            start = max(start, datetime.fromtimestamp(logged.at_ms / 1000, tz=UTC))
            yield logged
        if not follow:
            return
        time.sleep(interval_s)


@dataclass(frozen=True)
class Republished:
    job_id: str
    outcome: Literal["published", "open", "not_found"]
    detail: CompletionDetail | None = None


def republish(operator: Operator, job_ids: Sequence[str]) -> list[Republished]:
    """Refresh the manifest and publish the completion event of each job's latest run
    (whole ids or unique prefixes); a job still open has nothing to publish yet."""
    bus = operator.resources.event_bus_name
    if not bus:
        raise NoEventLog(
            f"stack {operator.resources.stack_name!r} has no event bus (EventBusName "
            "output): deploy the current template"
        )
    notifier = Notifier(
        events=operator.events,
        bus_name=bus,
        manifests=ManifestKeeper(
            s3=operator.s3, jobs=operator.jobs, results_bucket=operator.resources.artifact_bucket
        ),
        results_bucket=operator.resources.artifact_bucket,
    )
    results = []
    for job_id, job in find_jobs(operator, job_ids).items():
        if job is None:
            results.append(Republished(job_id, "not_found"))
        elif not job.status.terminal:
            results.append(Republished(job.job_id, "open"))
        else:
            detail = notifier.job_changed(None, job)
            results.append(Republished(job.job_id, "published", detail))
    return results


class NoFailureRecords(LookupError):
    """The stack has no notifier failure bucket and queue (deployed before them)."""


def failed_job_ids(record: dict[str, Any]) -> list[str]:
    """The jobs whose changes one OnFailure record of the notifier holds (its payload:
    the stream records of the batch)."""
    payload = record.get("payload")
    event = json.loads(payload) if isinstance(payload, str) else payload
    if not isinstance(event, dict):
        return []
    deserialize = TypeDeserializer().deserialize
    found = []
    for change in event.get("Records", []):
        image = change.get("dynamodb", {}).get("NewImage") or {}
        item = {name: deserialize(value) for name, value in image.items()}
        if item.get("sk") == JOB_SK and isinstance(item.get("job_id"), str):
            found.append(item["job_id"])
    return list(dict.fromkeys(found))


def republish_failed(operator: Operator) -> list[Republished]:
    """Republish the jobs of every parked notifier failure, deleting each message once
    its jobs are published (a message whose record cannot be read stays). Each job once,
    however many of its changes were parked: a run's end and its slot's release (which
    writes the ended job's record again) may fail in separate batches."""
    queue, bucket = (
        operator.resources.notify_failure_queue_url,
        operator.resources.notify_failure_bucket,
    )
    if not queue or not bucket:
        raise NoFailureRecords(
            f"stack {operator.resources.stack_name!r} has no NotifyFailureBucketName and "
            "NotifyFailureQueueUrl outputs: deploy the current template"
        )
    results: list[Republished] = []
    republished: set[str] = set()
    while True:
        messages = operator.sqs.receive_message(
            QueueUrl=queue, MaxNumberOfMessages=10, VisibilityTimeout=120, WaitTimeSeconds=0
        ).get("Messages", [])
        if not messages:
            return results
        for message in messages:
            job_ids: list[str] = []
            for key in _record_keys(message.get("Body", ""), bucket):
                body = operator.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
                job_ids.extend(failed_job_ids(json.loads(body)))
            fresh = [job_id for job_id in dict.fromkeys(job_ids) if job_id not in republished]
            republished.update(fresh)
            results.extend(republish(operator, fresh) if fresh else [])
            operator.sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])


def _record_keys(body: str, bucket: str) -> list[str]:
    """The failure records an S3 notification names (none for S3's test event)."""
    data = json.loads(body)
    return [
        unquote_plus(record["s3"]["object"]["key"])
        for record in data.get("Records", [])
        if record.get("eventName", "").startswith("ObjectCreated:")
        and record["s3"]["bucket"]["name"] == bucket
    ]
