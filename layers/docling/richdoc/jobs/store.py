"""Job and attempt records in one DynamoDB table.

A job is one source object version; its id is derived from bucket, key and version id
(or ETag when the bucket is unversioned), so duplicate notifications land on the same job.
Each run of a job is one state machine execution named ``<job id>-r<run>``; a redrive of a
dead-lettered job starts the next run. Every status write is conditional on the run, so
a stale run can never overwrite a newer run's status.

Items (``pk`` = ``JOB#<job id>``):

* ``sk = "JOB"`` — the job: status, run, stage, source, options, the number of page-range
  shards its parse runs as, failure, outputs, counts, the original ingest message and, once
  dead-lettered, the dead-letter message's id.
  Only job items carry ``job_status``, so the ``by-status`` index is sparse.

A failed run is recorded in two steps: FAILED (the failure is known, the job is visible
and not terminal), then DEAD_LETTERED once its dead-letter message is on the queue, so no
job is terminal without the message an operator redrives.
* ``sk = "ATTEMPT#r<run>#<seq>"`` — one per Lambda attempt: stage, tier, the shard's pages,
  outcome, whether the artifact cache answered, timings.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors
from richdoc.contracts import JobCounts, JobOptions, JobOutputs, SourceObject
from richdoc.taxonomy import Failure, FailureKind

if TYPE_CHECKING:
    from types_boto3_dynamodb import DynamoDBServiceResource
    from types_boto3_dynamodb.service_resource import Table

_log = logging.getLogger(__name__)

JOBS_TABLE_ENV = "JOBS_TABLE"
STATUS_INDEX = "by-status"
JOB_SK = "JOB"
ATTEMPT_PREFIX = "ATTEMPT#"
RUNNING_OUTCOME = "running"
OK_OUTCOME = "ok"
# Reasons are for humans and for the DLQ message attributes; keep items small.
MAX_REASON_CHARS = 1000


class JobStatus(StrEnum):
    """The closed status vocabulary. Terminal: SUCCEEDED, DEAD_LETTERED."""

    QUEUED = "QUEUED"  # the starter created the run; its execution is being started
    RUNNING = "RUNNING"  # the state machine recorded the start of the run
    SUCCEEDED = "SUCCEEDED"
    # The run failed and its failure is recorded; the dead-letter message is not yet
    # confirmed durable. Not terminal: the state machine, the reconciler or the sweep
    # sends it (once) and marks the job DEAD_LETTERED.
    FAILED = "FAILED"
    DEAD_LETTERED = "DEAD_LETTERED"  # failed; the ingest message is on the dead-letter queue

    @property
    def terminal(self) -> bool:
        return self in (JobStatus.SUCCEEDED, JobStatus.DEAD_LETTERED)


class StaleRun(Exception):
    """A write for a run that is no longer the job's current run (or not in that state)."""


def job_id_for(bucket: str, key: str, version: str) -> str:
    """Deterministic job id: the same object version always maps to the same job."""
    digest = hashlib.sha256(f"{bucket}\x00{key}\x00{version}".encode()).hexdigest()
    return digest[:32]


def execution_name(job_id: str, run: int) -> str:
    return f"{job_id}-r{run}"


def timestamp(moment: datetime) -> str:
    """How records store a moment (UTC, milliseconds): strings that sort in time order, so
    the by-status index can range over ``updated_at``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _now() -> str:
    return timestamp(datetime.now(UTC))


def _to_dynamo(value: Any) -> Any:
    """DynamoDB wants Decimal, not float; drop None so items stay sparse."""
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, Mapping):
        return {k: _to_dynamo(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_to_dynamo(v) for v in value]
    return value


def _from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    return value


@dataclass
class Attempt:
    job_id: str
    run: int
    seq: int
    stage: str
    attempt: int
    outcome: str
    started_at: str
    tier: int | None = None
    pages: str | None = None  # a shard's page range, "51-100"; None for a whole document
    memory_mb: int | None = None
    request_id: str | None = None
    reason: str | None = None
    ended_at: str | None = None
    duration_ms: int | None = None
    cached: bool | None = None  # answered from the artifact cache (parse, merge)
    recorded_by: str = "handler"

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Attempt:
        data = _from_dynamo(item)
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Job:
    job_id: str
    status: JobStatus
    run: int
    source: SourceObject
    options: JobOptions = field(default_factory=JobOptions)
    stage: str | None = None
    tier: int | None = None
    shards: int | None = None  # page-range shards the parse ran as (the plan's; 1: whole)
    pipeline: str | None = None
    failure: dict[str, Any] | None = None
    execution_arn: str | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    message: str | None = None  # the ingest message body that created the job
    dead_letter: dict[str, Any] | None = None  # message_id, sent_by

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Job:
        data = _from_dynamo(item)
        return cls(
            job_id=data["job_id"],
            status=JobStatus(data["job_status"]),
            run=data["run"],
            source=SourceObject.model_validate(data["source"]),
            options=JobOptions.model_validate(data.get("options", {})),
            stage=data.get("stage"),
            tier=data.get("tier"),
            shards=data.get("shards"),
            pipeline=data.get("pipeline"),
            failure=data.get("failure"),
            execution_arn=data.get("execution_arn"),
            outputs=data.get("outputs", {}),
            counts=data.get("counts", {}),
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            started_at=data.get("started_at"),
            ended_at=data.get("ended_at"),
            message=data.get("message"),
            dead_letter=data.get("dead_letter"),
        )

    def recorded_failure(self) -> Failure | None:
        """The failure recorded on the job (FAILED and DEAD_LETTERED jobs have one)."""
        if not self.failure:
            return None
        return Failure(
            kind=FailureKind(self.failure["kind"]),
            reason=self.failure.get("reason", ""),
            feature=self.failure.get("feature"),
            error=self.failure.get("error"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "status": str(self.status),
            "run": self.run,
            "stage": self.stage,
            "tier": self.tier,
            "shards": self.shards,
            "pipeline": self.pipeline,
            # As stored: DynamoDB items keep no null attributes.
            "source": self.source.model_dump(mode="json", exclude_none=True),
            "options": self.options.model_dump(mode="json"),
            "failure": self.failure,
            "execution_arn": self.execution_arn,
            "outputs": self.outputs,
            "counts": self.counts,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "dead_letter": self.dead_letter,
        }


def _conditional(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


class JobStore:
    """Conditional, run-fenced writes of job and attempt items."""

    def __init__(self, table: Table, clock: Callable[[], str] = _now) -> None:
        self.table = table
        self.clock = clock

    @classmethod
    def from_env(cls, dynamodb: DynamoDBServiceResource) -> JobStore:
        return cls(dynamodb.Table(os.environ[JOBS_TABLE_ENV]))

    # ---- reads -------------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        with aws_errors("reading job"):
            item = self.table.get_item(
                Key={"pk": f"JOB#{job_id}", "sk": JOB_SK}, ConsistentRead=True
            ).get("Item")
        return Job.from_item(item) if item else None

    def get_many(self, job_ids: Iterable[str]) -> dict[str, Job]:
        """Jobs by id, 100 per BatchGetItem (missing jobs are absent)."""
        return {job_id: Job.from_item(item) for job_id, item in self._batch_get(job_ids).items()}

    def statuses(self, job_ids: Iterable[str]) -> dict[str, JobStatus]:
        """Only the statuses of these jobs: a cheap poll for callers waiting on many."""
        items = self._batch_get(job_ids, projection="job_id, job_status")
        return {job_id: JobStatus(item["job_status"]) for job_id, item in items.items()}

    def _batch_get(
        self, job_ids: Iterable[str], projection: str | None = None
    ) -> dict[str, dict[str, Any]]:
        client, name = self.table.meta.client, self.table.name
        ids, found = list(dict.fromkeys(job_ids)), {}
        for start in range(0, len(ids), 100):  # BatchGetItem's limit
            spec: dict[str, Any] = {
                "Keys": [{"pk": f"JOB#{i}", "sk": JOB_SK} for i in ids[start : start + 100]],
                "ConsistentRead": True,
            }
            if projection:
                spec["ProjectionExpression"] = projection
            request: dict[str, Any] = {name: spec}
            while request:
                with aws_errors("reading jobs"):
                    response = client.batch_get_item(RequestItems=request)
                for item in response["Responses"].get(name, []):
                    found[str(item["job_id"])] = dict(item)
                request = response.get("UnprocessedKeys") or {}
        return found

    def attempts(self, job_id: str, run: int | None = None) -> list[Attempt]:
        prefix = ATTEMPT_PREFIX if run is None else f"{ATTEMPT_PREFIX}r{run:03d}#"
        items = self._query(
            KeyConditionExpression=Key("pk").eq(f"JOB#{job_id}") & Key("sk").begins_with(prefix),
            ConsistentRead=True,
        )
        return [Attempt.from_item(i) for i in items]

    def list_jobs(self, status: JobStatus | None = None) -> list[Job]:
        """Jobs by status through the sparse index: no table scan, even for 'all'."""
        statuses = [status] if status else list(JobStatus)
        jobs: list[Job] = []
        for s in statuses:
            items = self._query(
                IndexName=STATUS_INDEX, KeyConditionExpression=Key("job_status").eq(str(s))
            )
            jobs.extend(Job.from_item(i) for i in items)
        return sorted(jobs, key=lambda j: (j.created_at or "", j.job_id))

    def unchanged_since(self, status: JobStatus, moment: datetime) -> list[Job]:
        """Jobs in ``status`` whose record has not changed since ``moment`` (by-status
        index: the status and an ``updated_at`` range, no scan). The index is eventually
        consistent: callers re-read a job before acting on it."""
        items = self._query(
            IndexName=STATUS_INDEX,
            KeyConditionExpression=Key("job_status").eq(str(status))
            & Key("updated_at").lt(timestamp(moment)),
        )
        return [Job.from_item(i) for i in items]

    def _query(self, **kwargs: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        with aws_errors("querying jobs"):
            while True:
                page = self.table.query(**kwargs)
                items.extend(page.get("Items", []))
                if "LastEvaluatedKey" not in page:
                    return items
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # ---- job transitions ---------------------------------------------------------------

    def create(
        self,
        job_id: str,
        source: SourceObject,
        options: JobOptions,
        *,
        message: str | None = None,
        execution_arn: str | None = None,
    ) -> bool:
        """Create run 1 as QUEUED. False when the job already exists (a duplicate).

        ``message`` (the ingest message body) and ``execution_arn`` (the execution the
        run will be) let the sweep close a run whose execution never started.
        """
        now = self.clock()
        item = _to_dynamo(
            {
                "pk": f"JOB#{job_id}",
                "sk": JOB_SK,
                "job_id": job_id,
                "job_status": str(JobStatus.QUEUED),
                "run": 1,
                "source": source.model_dump(mode="json"),
                "options": options.model_dump(mode="json"),
                "message": message,
                "execution_arn": execution_arn,
                "attempt_seq": 0,
                "created_at": now,
                "updated_at": now,
            }
        )
        try:
            with aws_errors("creating job"):
                self.table.put_item(Item=item, ConditionExpression=Attr("pk").not_exists())
        except ClientError as exc:
            if _conditional(exc):
                return False
            raise
        return True

    def start_next_run(
        self, job_id: str, failed_run: int, *, execution_arn: str | None = None
    ) -> int:
        """Redrive: a dead-lettered run N becomes QUEUED run N+1, exactly once.

        FAILED is accepted too: the redriven message of run N is the proof that its
        dead-letter send succeeded, even if marking the job DEAD_LETTERED has not
        happened yet (that mark then finds a newer run and stops).
        """
        self._transition(
            job_id,
            run=failed_run,
            allowed=(JobStatus.DEAD_LETTERED, JobStatus.FAILED),
            status=JobStatus.QUEUED,
            updates={
                "run": failed_run + 1,
                "execution_arn": execution_arn,
                **dict.fromkeys(
                    ("failure", "stage", "tier", "shards", "started_at", "ended_at", "dead_letter")
                ),
            },
        )
        return failed_run + 1

    def mark_running(self, job_id: str, run: int, execution_arn: str) -> None:
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.QUEUED, JobStatus.RUNNING),
            status=JobStatus.RUNNING,
            updates={"execution_arn": execution_arn, "started_at": self.clock()},
        )

    def record_shards(self, job_id: str, run: int, shards: int) -> None:
        """The plan's decision: the run's parse runs as ``shards`` page-range shards (1:
        the whole document at once)."""
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.RUNNING,),
            status=JobStatus.RUNNING,
            updates={"shards": shards},
        )

    def mark_stage(self, job_id: str, run: int, stage: str, tier: int | None) -> None:
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.RUNNING,),
            status=JobStatus.RUNNING,
            updates={"stage": stage, "tier": tier},
        )

    def succeed(
        self,
        job_id: str,
        run: int,
        *,
        outputs: JobOutputs,
        counts: JobCounts,
        pipeline: str | None,
        sha256: str | None,
        shards: int = 1,
    ) -> None:
        updates: dict[str, Any] = {
            "outputs": outputs.model_dump(mode="json"),
            "counts": counts.model_dump(mode="json"),
            "pipeline": pipeline,
            "shards": shards,
            "stage": None,
            "ended_at": self.clock(),
        }
        if sha256:
            updates["source.sha256"] = sha256
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.RUNNING, JobStatus.SUCCEEDED),
            status=JobStatus.SUCCEEDED,
            updates=updates,
        )

    def record_failure(self, job_id: str, run: int, failure: Failure) -> Job:
        """The run failed: FAILED with the failure, until its dead-letter message is sent.

        A repeated call (a retried RecordFailure) keeps the failure recorded first.
        """
        record = {
            "kind": str(failure.kind),
            "reason": failure.reason[:MAX_REASON_CHARS],
            "feature": failure.feature,
            "error": failure.error,
        }
        try:
            return self._transition(
                job_id,
                run=run,
                allowed=(JobStatus.QUEUED, JobStatus.RUNNING),
                status=JobStatus.FAILED,
                updates={"failure": record},
            )
        except StaleRun:
            job = self.get(job_id)
            if job is not None and job.run == run and job.status is JobStatus.FAILED:
                return job
            raise

    def mark_dead_lettered(
        self, job_id: str, run: int, message_id: str, *, sent_by: str
    ) -> Job | None:
        """The FAILED run's dead-letter message (``message_id``) is on the queue: the
        job becomes DEAD_LETTERED, terminal, and is returned. Repeating the mark with the
        same message id writes nothing and returns None; any other mismatch is a
        StaleRun."""
        try:
            return self._transition(
                job_id,
                run=run,
                allowed=(JobStatus.FAILED,),
                status=JobStatus.DEAD_LETTERED,
                updates={
                    "dead_letter": {"message_id": message_id, "sent_by": sent_by},
                    "stage": None,
                    "ended_at": self.clock(),
                },
            )
        except StaleRun:
            job = self.get(job_id)
            if (
                job is not None
                and job.run == run
                and job.status is JobStatus.DEAD_LETTERED
                and (job.dead_letter or {}).get("message_id") == message_id
            ):
                return None
            raise

    def _transition(
        self,
        job_id: str,
        *,
        run: int,
        allowed: tuple[JobStatus, ...],
        status: JobStatus,
        updates: Mapping[str, Any],
    ) -> Job:
        """One conditional update: only run ``run`` in one of ``allowed`` may move on.

        ``updates`` maps attribute paths (``a.b`` for nested) to values; None removes.
        Returns the job as written.
        """
        names = {"#status": "job_status", "#run": "run", "#updated": "updated_at"}
        values: dict[str, Any] = {":status": str(status), ":run": run, ":updated": self.clock()}
        sets = ["#status = :status", "#updated = :updated"]
        removals = []
        for i, (path, value) in enumerate(updates.items()):
            placeholders = []
            for j, part in enumerate(path.split(".")):
                names[f"#u{i}_{j}"] = part
                placeholders.append(f"#u{i}_{j}")
            target = ".".join(placeholders)
            if value is None:
                removals.append(target)
            else:
                values[f":u{i}"] = _to_dynamo(value)
                sets.append(f"{target} = :u{i}")
        expression = "SET " + ", ".join(sets)
        if removals:
            expression += " REMOVE " + ", ".join(removals)
        allowed_values = {f":allowed{i}": str(s) for i, s in enumerate(allowed)}
        values.update(allowed_values)
        condition = f"#run = :run AND #status IN ({', '.join(allowed_values)})"
        try:
            with aws_errors("updating job"):
                written = self.table.update_item(
                    Key={"pk": f"JOB#{job_id}", "sk": JOB_SK},
                    UpdateExpression=expression,
                    ConditionExpression=condition,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                    ReturnValues="ALL_NEW",
                )
        except ClientError as exc:
            if _conditional(exc):
                raise StaleRun(
                    f"job {job_id}: run {run} is not current or not in {[str(a) for a in allowed]}"
                ) from exc
            raise
        return Job.from_item(written["Attributes"])

    # ---- attempts ----------------------------------------------------------------------

    def _next_seq(self, job_id: str) -> int:
        with aws_errors("numbering attempt"):
            result = self.table.update_item(
                Key={"pk": f"JOB#{job_id}", "sk": JOB_SK},
                UpdateExpression="ADD attempt_seq :one",
                ConditionExpression=Attr("pk").exists(),
                ExpressionAttributeValues={":one": 1},
                ReturnValues="UPDATED_NEW",
            )
        return int(str(result["Attributes"]["attempt_seq"]))

    def open_attempt(
        self,
        job_id: str,
        run: int,
        stage: str,
        *,
        tier: int | None = None,
        pages: str | None = None,
        memory_mb: int | None = None,
        request_id: str | None = None,
    ) -> Attempt:
        """Record that a Lambda attempt began (it stays 'running' if the platform kills it).
        Attempts are numbered per stage, and per shard (``pages``) within it."""
        # The stage write is run-fenced: a stale execution stops here, before recording.
        self.mark_stage(job_id, run, stage, tier)
        previous = self._stage_attempts(job_id, run, stage, pages)
        attempt = Attempt(
            job_id=job_id,
            run=run,
            seq=self._next_seq(job_id),
            stage=stage,
            attempt=len(previous) + 1,
            outcome=RUNNING_OUTCOME,
            started_at=self.clock(),
            tier=tier,
            pages=pages,
            memory_mb=memory_mb,
            request_id=request_id,
        )
        self._put_attempt(attempt)
        return attempt

    def _stage_attempts(
        self, job_id: str, run: int, stage: str, pages: str | None
    ) -> list[Attempt]:
        """The run's attempts of ``stage`` for the same shard (or the whole document)."""
        return [a for a in self.attempts(job_id, run) if a.stage == stage and a.pages == pages]

    def close_attempt(self, attempt: Attempt, outcome: str, reason: str | None = None) -> bool:
        """Close a running attempt (with ``attempt.cached`` when the handler set it). False
        if it was already closed (e.g. by a catch path)."""
        ended = self.clock()
        started = datetime.fromisoformat(attempt.started_at)
        duration_ms = int((datetime.fromisoformat(ended) - started).total_seconds() * 1000)
        values: dict[str, Any] = {
            ":outcome": outcome,
            ":ended": ended,
            ":duration": duration_ms,
        }
        expression = "SET outcome = :outcome, ended_at = :ended, duration_ms = :duration"
        if reason:
            values[":reason"] = reason[:MAX_REASON_CHARS]
            expression += ", reason = :reason"
        if attempt.cached is not None:
            values[":cached"] = attempt.cached
            expression += ", cached = :cached"
        try:
            with aws_errors("closing attempt"):
                self.table.update_item(
                    Key=self._attempt_key(attempt),
                    UpdateExpression=expression,
                    ConditionExpression=Attr("outcome").eq(RUNNING_OUTCOME),
                    ExpressionAttributeValues=values,
                )
        except ClientError as exc:
            if _conditional(exc):
                return False
            raise
        attempt.outcome, attempt.ended_at, attempt.duration_ms = outcome, ended, duration_ms
        attempt.reason = reason
        return True

    @contextlib.contextmanager
    def attempt(
        self,
        job_id: str,
        run: int,
        stage: str,
        *,
        tier: int | None = None,
        pages: str | None = None,
        memory_mb: int | None = None,
        request_id: str | None = None,
    ) -> Iterator[Attempt]:
        """Wrap one handler invocation: open, then close with 'ok' or the error name."""
        attempt = self.open_attempt(
            job_id,
            run,
            stage,
            tier=tier,
            pages=pages,
            memory_mb=memory_mb,
            request_id=request_id,
        )
        try:
            yield attempt
        except Exception as exc:
            try:
                self.close_attempt(attempt, type(exc).__name__, str(exc))
            except Exception as close_failure:
                # The handler's error decides the route (retry, escalate, dead-letter);
                # a failure to record it must not replace it. The attempt stays
                # 'running', like one the platform killed.
                _log.warning(
                    "could not close attempt %s of job %s: %s",
                    attempt.seq,
                    job_id,
                    close_failure,
                    exc_info=close_failure,
                )
                exc.add_note(
                    f"closing the attempt record failed too: "
                    f"{type(close_failure).__name__}: {close_failure}"
                )
            raise
        self.close_attempt(attempt, OK_OUTCOME)

    def record_platform_failure(
        self,
        job_id: str,
        run: int,
        stage: str,
        tier: int | None,
        failure: Failure,
        *,
        pages: str | None = None,
    ) -> Attempt | None:
        """Catch path: account for an attempt the handler could not close itself.

        The platform killed it (timeout, OOM) or never ran it (service errors). An attempt
        still 'running' for the stage (and the shard of ``pages``: shards run side by side)
        is closed with the error name; if none is open and the last one does not already
        carry this error, one is added.
        """
        error = failure.error or str(failure.kind)
        stage_attempts = self._stage_attempts(job_id, run, stage, pages)
        for attempt in stage_attempts:
            if attempt.outcome == RUNNING_OUTCOME:
                self.close_attempt(attempt, error, failure.reason)
                return attempt
        if stage_attempts and stage_attempts[-1].outcome == error:
            return None
        now = self.clock()
        attempt = Attempt(
            job_id=job_id,
            run=run,
            seq=self._next_seq(job_id),
            stage=stage,
            attempt=len(stage_attempts) + 1,
            outcome=error,
            started_at=now,
            ended_at=now,
            duration_ms=0,
            tier=tier,
            pages=pages,
            reason=failure.reason[:MAX_REASON_CHARS],
            recorded_by="state-machine",
        )
        self._put_attempt(attempt)
        return attempt

    def close_running_attempts(self, job_id: str, run: int, failure: Failure) -> list[Attempt]:
        """Close every attempt of the run still 'running' with the failure's error name
        (the run's execution has ended, so nothing will close them); returns them."""
        error = failure.error or str(failure.kind)
        running = [a for a in self.attempts(job_id, run) if a.outcome == RUNNING_OUTCOME]
        return [a for a in running if self.close_attempt(a, error, failure.reason)]

    def _attempt_key(self, attempt: Attempt) -> dict[str, str]:
        return {
            "pk": f"JOB#{attempt.job_id}",
            "sk": f"{ATTEMPT_PREFIX}r{attempt.run:03d}#{attempt.seq:04d}",
        }

    def _put_attempt(self, attempt: Attempt) -> None:
        item = {**self._attempt_key(attempt), **_to_dynamo(attempt.__dict__)}
        with aws_errors("recording attempt"):
            self.table.put_item(Item=item)
