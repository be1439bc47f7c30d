"""JobStore: reads of job items and their run-fenced transitions (attempts: ``attempts``).

Each transition is one conditional update of the job item (``table.fenced_update``):
only the run it names, in the statuses it may leave, moves on, so a stale run can never
overwrite a newer one.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors
from richdoc.contracts import JobCounts, JobOptions, JobOutputs, SourceObject
from richdoc.jobs.attempts import ATTEMPT_COUNTS, ATTEMPT_SEQ, AttemptRecords
from richdoc.jobs.keys import job_key
from richdoc.jobs.model import (
    MAX_REASON_CHARS,
    TTL_ATTRIBUTE,
    DeadLetterMark,
    DeadLetterSender,
    DeletionMark,
    Item,
    Job,
    JobStatus,
    expires_at,
    stored,
    timestamp,
)
from richdoc.jobs.table import StaleRun, Update, conditional_check_failed, fenced_update, query_all
from richdoc.taxonomy import Failure

if TYPE_CHECKING:
    from types_boto3_dynamodb import DynamoDBServiceResource
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import (
        KeysAndAttributesTypeDef,
        KeysAndAttributesUnionTypeDef,
    )

JOBS_TABLE_ENV = "JOBS_TABLE"
# Days a job's record (and its attempts) is kept after the job ends: JobRetentionDays, the
# run outputs' retention too (template.yaml). Unset or 0 keeps them.
JOB_RETENTION_ENV = "RICHDOC_JOB_RETENTION_DAYS"
STATUS_INDEX = "by-status"
BATCH_GET_LIMIT = 100


def _now() -> str:
    return timestamp(datetime.now(UTC))


class JobStore(AttemptRecords):
    """Conditional, run-fenced writes of job and attempt items.

    A job that ends (SUCCEEDED, DEAD_LETTERED, DELETED) expires ``retention_days`` later
    (the table's TTL), as long as its run outputs are kept; a redriven run takes the
    expiry away until it ends in turn. Attempts expire that long after they open.
    """

    def __init__(
        self,
        table: Table,
        clock: Callable[[], str] = _now,
        *,
        retention_days: int | None = None,
    ) -> None:
        self.table = table
        self.clock = clock
        self.retention_days = retention_days or None

    @classmethod
    def from_env(cls, dynamodb: DynamoDBServiceResource) -> JobStore:
        retention = os.environ.get(JOB_RETENTION_ENV, "").strip()
        return cls(
            dynamodb.Table(os.environ[JOBS_TABLE_ENV]),
            retention_days=int(retention) if retention else None,
        )

    # ---- reads -------------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        with aws_errors("reading job"):
            item = self.table.get_item(Key=job_key(job_id), ConsistentRead=True).get("Item")
        return Job.from_item(item) if item else None

    def get_many(self, job_ids: Iterable[str]) -> dict[str, Job]:
        """Jobs by id, 100 per BatchGetItem (missing jobs are absent)."""
        return {job_id: Job.from_item(item) for job_id, item in self._batch_get(job_ids).items()}

    def statuses(self, job_ids: Iterable[str]) -> dict[str, JobStatus]:
        """Only the statuses of these jobs: a cheap poll for callers waiting on many."""
        items = self._batch_get(job_ids, projection="job_id, job_status")
        return {job_id: JobStatus(str(item["job_status"])) for job_id, item in items.items()}

    def _batch_get(self, job_ids: Iterable[str], projection: str | None = None) -> dict[str, Item]:
        client, name = self.table.meta.client, self.table.name
        ids, found = list(dict.fromkeys(job_ids)), {}
        for start in range(0, len(ids), BATCH_GET_LIMIT):
            spec: KeysAndAttributesTypeDef = {
                "Keys": [job_key(i) for i in ids[start : start + BATCH_GET_LIMIT]],
                "ConsistentRead": True,
            }
            if projection:
                spec["ProjectionExpression"] = projection
            request: Mapping[str, KeysAndAttributesUnionTypeDef] = {name: spec}
            while request:
                with aws_errors("reading jobs"):
                    response = client.batch_get_item(RequestItems=request)
                for item in response["Responses"].get(name, []):
                    # The table's client gives Python values (the resource's
                    # deserialization), not the wire shapes its stubs describe.
                    found[str(item["job_id"])] = cast(Item, item)
                request = response.get("UnprocessedKeys") or {}
        return found

    def list_jobs(self, status: JobStatus | None = None) -> list[Job]:
        """Jobs by status through the sparse index: no table scan, even for 'all'."""
        statuses = [status] if status else list(JobStatus)
        jobs: list[Job] = []
        for s in statuses:
            items = query_all(
                self.table, IndexName=STATUS_INDEX, KeyConditionExpression=Key("job_status").eq(s)
            )
            jobs.extend(Job.from_item(i) for i in items)
        return sorted(jobs, key=lambda j: (j.created_at or "", j.job_id))

    def unchanged_since(self, status: JobStatus, moment: datetime) -> list[Job]:
        """Jobs in ``status`` whose record has not changed since ``moment`` (by-status
        index: the status and an ``updated_at`` range, no scan). The index is eventually
        consistent: callers re-read a job before acting on it."""
        items = query_all(
            self.table,
            IndexName=STATUS_INDEX,
            KeyConditionExpression=Key("job_status").eq(status)
            & Key("updated_at").lt(timestamp(moment)),
        )
        return [Job.from_item(i) for i in items]

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
        job = Job(
            job_id=job_id,
            status=JobStatus.QUEUED,
            run=1,
            source=source,
            options=options,
            message=message,
            execution_arn=execution_arn,
            created_at=now,
            updated_at=now,
        )
        item = {**job_key(job_id), **job.to_item(), ATTEMPT_SEQ: 0, ATTEMPT_COUNTS: {}}
        try:
            with aws_errors("creating job"):
                self.table.put_item(Item=item, ConditionExpression=Attr("pk").not_exists())
        except ClientError as exc:
            if conditional_check_failed(exc):
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
            update=Update()
            .set("run", failed_run + 1)
            .set("execution_arn", execution_arn)
            .set(ATTEMPT_COUNTS, {})  # attempts are numbered per run
            .remove("failure", "stage", "tier", "shards", "started_at", "ended_at", "dead_letter"),
        )
        return failed_run + 1

    def mark_running(self, job_id: str, run: int, execution_arn: str) -> None:
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.QUEUED, JobStatus.RUNNING),
            status=JobStatus.RUNNING,
            update=Update().set("execution_arn", execution_arn).set("started_at", self.clock()),
        )

    def record_shards(self, job_id: str, run: int, shards: int) -> None:
        """The plan's decision: the run's parse runs as ``shards`` page-range shards (1:
        the whole document at once)."""
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.RUNNING,),
            status=JobStatus.RUNNING,
            update=Update().set("shards", shards),
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
        update = (
            Update()
            .set("outputs", stored(outputs))
            .set("counts", stored(counts))
            .set("pipeline", pipeline)
            .set("shards", shards)
            .set("ended_at", self.clock())
            .remove("stage")
        )
        if sha256:
            update.set(("source", "sha256"), sha256)
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.RUNNING, JobStatus.SUCCEEDED),
            status=JobStatus.SUCCEEDED,
            update=update,
        )

    def record_failure(self, job_id: str, run: int, failure: Failure) -> Job:
        """The run failed: FAILED with the failure, until its dead-letter message is sent.

        A repeated call (a retried RecordFailure) keeps the failure recorded first.
        """
        recorded = dataclasses.replace(failure, reason=failure.reason[:MAX_REASON_CHARS])
        try:
            return self._transition(
                job_id,
                run=run,
                allowed=(JobStatus.QUEUED, JobStatus.RUNNING),
                status=JobStatus.FAILED,
                update=Update().set("failure", stored(recorded)),
            )
        except StaleRun:
            job = self.get(job_id)
            if job is not None and job.run == run and job.status is JobStatus.FAILED:
                return job
            raise

    def mark_dead_lettered(
        self, job_id: str, run: int, message_id: str, *, sent_by: DeadLetterSender
    ) -> Job | None:
        """The FAILED run's dead-letter message (``message_id``) is on the queue: the
        job becomes DEAD_LETTERED, terminal, and is returned. Repeating the mark with the
        same message id writes nothing and returns None; any other mismatch is a
        StaleRun."""
        dead_letter = DeadLetterMark(message_id=message_id, sent_by=sent_by)
        try:
            return self._transition(
                job_id,
                run=run,
                allowed=(JobStatus.FAILED,),
                status=JobStatus.DEAD_LETTERED,
                update=Update()
                .set("dead_letter", stored(dead_letter))
                .set("ended_at", self.clock())
                .remove("stage"),
            )
        except StaleRun:
            job = self.get(job_id)
            if (
                job is not None
                and job.run == run
                and job.status is JobStatus.DEAD_LETTERED
                and job.dead_letter is not None
                and job.dead_letter.message_id == message_id
            ):
                return None
            raise

    def mark_deleted(
        self, job_id: str, mark: DeletionMark, *, source: SourceObject | None = None
    ) -> Job | None:
        """The job is DELETED, whatever its run and status (terminal; its outputs' keys
        dropped): the job as written. Repeated, the job is returned as it is. A job not
        recorded yet is created DELETED when ``source`` is given (a tombstone, so that
        the object's notification, arriving later, starts nothing); else None.

        Not run-fenced: a running run then finds the job DELETED at its next write
        (StaleRun), and what it wrote is deleted after it (richdoc.deletion)."""
        now = self.clock()
        update = (
            Update()
            .set("job_status", str(JobStatus.DELETED))
            .set("deletion", stored(mark))
            .set("updated_at", now)
            .set("ended_at", now)
            .set(TTL_ATTRIBUTE, expires_at(now, self.retention_days))
            .remove("stage", "outputs")
        )
        try:
            with aws_errors("deleting job"):
                written = self.table.update_item(
                    Key=job_key(job_id),
                    ConditionExpression=Attr("pk").exists()
                    & Attr("job_status").ne(str(JobStatus.DELETED)),
                    ReturnValues="ALL_NEW",
                    **update.args(),
                )
            return Job.from_item(written["Attributes"])
        except ClientError as exc:
            if not conditional_check_failed(exc):
                raise
        found = self.get(job_id)
        if found is not None or source is None:
            return found  # deleted already, or never recorded
        tombstone = Job(
            job_id=job_id,
            status=JobStatus.DELETED,
            run=1,
            source=source,
            deletion=mark,
            created_at=now,
            updated_at=now,
            ended_at=now,
        )
        item = {**job_key(job_id), **tombstone.to_item()}
        expiry = expires_at(now, self.retention_days)
        if expiry is not None:
            item[TTL_ATTRIBUTE] = expiry
        try:
            with aws_errors("recording a deleted job"):
                self.table.put_item(Item=item, ConditionExpression=Attr("pk").not_exists())
        except ClientError as exc:
            if not conditional_check_failed(exc):
                raise
            return self.mark_deleted(job_id, mark)  # the job was created meanwhile
        return tombstone

    def _transition(
        self,
        job_id: str,
        *,
        run: int,
        allowed: tuple[JobStatus, ...],
        status: JobStatus,
        update: Update,
    ) -> Job:
        """One fenced update to ``status``; the job as written. A terminal status sets
        the record's expiry, any other takes it away (a redriven run is kept while it
        runs)."""
        now = self.clock()
        update.set("job_status", str(status)).set("updated_at", now)
        expiry = expires_at(now, self.retention_days) if status.terminal else None
        update.set(TTL_ATTRIBUTE, expiry)
        return Job.from_item(fenced_update(self.table, job_id, update, run=run, allowed=allowed))
