"""JobStore: reads of job items and their run-fenced transitions (attempts: ``attempts``).

Each transition is one conditional update of the job item (``table.fenced_update``):
only the run it names, in the statuses it may leave, moves on, so a stale run can never
overwrite a newer one, and a cancelled run can never be marked started, succeeded or
failed. Each transition also writes the job's phase (``richdoc.jobs.phase``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.contracts import (
    JobCounts,
    JobOptions,
    JobOutputs,
    PageSpan,
    PageSpanText,
    SourceObject,
)
from richdoc.jobs.attempts import ATTEMPT_COUNTS, ATTEMPT_SEQ, AttemptRecords
from richdoc.jobs.keys import STATUS_INDEX, BacklogKind, backlog_key, job_key
from richdoc.jobs.listing import JobFilter, JobPage, Position, count_jobs, page_jobs
from richdoc.jobs.model import (
    MAX_REASON_CHARS,
    REDRIVABLE_STATUSES,
    TTL_ATTRIBUTE,
    CancelRecord,
    DeadLetterMark,
    DeadLetterSender,
    DeletionMark,
    Item,
    Job,
    JobStatus,
    RedriveRequest,
    RunEnd,
    expires_at,
    stored,
    timestamp,
)
from richdoc.jobs.phase import JobPhase, Progress
from richdoc.jobs.table import (
    StaleRun,
    Update,
    conditional_check_failed,
    fenced_update,
    query_all,
)
from richdoc.taxonomy import Failure

if TYPE_CHECKING:
    from types_boto3_dynamodb import DynamoDBServiceResource
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import (
        KeysAndAttributesTypeDef,
        KeysAndAttributesUnionTypeDef,
        QueryInputTableQueryTypeDef,
    )

JOBS_TABLE_ENV = "JOBS_TABLE"
# Days a job's record (and its attempts) is kept after the job ends: JobRetentionDays, the
# run outputs' retention too (template.yaml). Unset or 0 keeps them.
JOB_RETENTION_ENV = "RICHDOC_JOB_RETENTION_DAYS"
BATCH_GET_LIMIT = 100


def _now() -> str:
    return timestamp(datetime.now(UTC))


# An item's key in the by-status index: where a walk over it may resume.
_STATUS_INDEX_KEY = ("job_status", "updated_at", "pk", "sk")


@dataclasses.dataclass(frozen=True)
class UnchangedPage:
    """``JobStore.unchanged_page``: each job with its index key, and where the next page
    begins (None: the index holds no more)."""

    jobs: list[tuple[Job, dict[str, object]]]
    after: Mapping[str, object] | None


class _JobState(BaseModel):
    """The few attributes of a job item a progress poll reads."""

    model_config = ConfigDict(extra="ignore")

    status: JobStatus = Field(validation_alias="job_status")
    phase: JobPhase | None = None
    tier: int | None = None
    shards: int | None = None
    shards_done: frozenset[PageSpanText] | None = None

    def progress(self) -> Progress:
        return Progress.of(
            self.phase, tier=self.tier, shards=self.shards, finished_ranges=self.shards_done
        )


class JobStore:
    """Conditional, run-fenced writes of job items; their attempt items in ``attempts``.

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
        # The same table, clock and retention: attempts are items of the job's partition.
        self.attempts = AttemptRecords(table, clock, retention_days=self.retention_days)

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
        items = self._batch_get(job_ids, projection=("job_id", "job_status"))
        return {job_id: JobStatus(str(item["job_status"])) for job_id, item in items.items()}

    def progress_of(self, job_ids: Iterable[str]) -> dict[str, tuple[JobStatus, Progress]]:
        """Only the statuses and progress of these jobs (a poll for callers waiting on
        many that show what the open ones are doing)."""
        fields = ("job_id", "job_status", "phase", "tier", "shards", "shards_done")
        found = {}
        for job_id, item in self._batch_get(job_ids, projection=fields).items():
            state = _JobState.model_validate(item)
            found[job_id] = (state.status, state.progress())
        return found

    def _batch_get(
        self, job_ids: Iterable[str], projection: tuple[str, ...] | None = None
    ) -> dict[str, Item]:
        client, name = self.table.meta.client, self.table.name
        ids, found = list(dict.fromkeys(job_ids)), {}
        for start in range(0, len(ids), BATCH_GET_LIMIT):
            spec: KeysAndAttributesTypeDef = {
                "Keys": [job_key(i) for i in ids[start : start + BATCH_GET_LIMIT]],
                "ConsistentRead": True,
            }
            if projection:
                names = {f"#p{i}": attribute for i, attribute in enumerate(projection)}
                spec["ProjectionExpression"] = ", ".join(names)
                spec["ExpressionAttributeNames"] = names
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

    def list_jobs(
        self, status: JobStatus | None = None, *, since: datetime | None = None
    ) -> list[Job]:
        """Jobs by status (and updated at or after ``since``) through the sparse index: no
        table scan, even for 'all'."""
        statuses = [status] if status else list(JobStatus)
        jobs: list[Job] = []
        for s in statuses:
            condition: ConditionBase = Key("job_status").eq(s)
            if since is not None:
                condition &= Key("updated_at").gte(timestamp(since))
            items = query_all(self.table, IndexName=STATUS_INDEX, KeyConditionExpression=condition)
            jobs.extend(Job.from_item(i) for i in items)
        return sorted(jobs, key=lambda j: (j.created_at or "", j.job_id))

    def page(self, which: JobFilter, *, limit: int, after: Position | None = None) -> JobPage:
        """One page of a listing, the most recently changed jobs first (``listing``)."""
        return page_jobs(self.table, which, limit=limit, after=after)

    def count(self, statuses: Sequence[JobStatus], *, since: str | None = None) -> int:
        """How many jobs are in these statuses (changed at or after ``since``)."""
        return count_jobs(self.table, statuses, since=since)

    def unchanged_page(
        self, status: JobStatus, moment: datetime, after: Mapping[str, object] | None = None
    ) -> UnchangedPage:
        """One page (DynamoDB's, at most 1 MB read) of the jobs in ``status`` whose record
        has not changed since ``moment``, oldest first, after the index key ``after``:
        the by-status index, a status and an ``updated_at`` range, no scan. Left out by a
        filter (DynamoDB reads them; the caller gets none): QUEUED jobs still waiting for
        a slot, and CANCELLED runs a backstop has closed already. The index is eventually
        consistent: callers re-read a job before acting on it."""
        query: QueryInputTableQueryTypeDef = {
            "IndexName": STATUS_INDEX,
            "KeyConditionExpression": Key("job_status").eq(status)
            & Key("updated_at").lt(timestamp(moment)),
        }
        if status is JobStatus.QUEUED:
            query["FilterExpression"] = Attr("backlog_key").not_exists()
        elif status is JobStatus.CANCELLED:
            query["FilterExpression"] = Attr("cancel.closed_at").not_exists()
        if after is not None:
            query["ExclusiveStartKey"] = dict(after)  # type: ignore[arg-type]
        with aws_errors("querying jobs"):
            page = self.table.query(**query)
        found: list[tuple[Job, dict[str, object]]] = [
            (Job.from_item(item), {name: item[name] for name in _STATUS_INDEX_KEY})
            for item in page.get("Items", [])
        ]
        return UnchangedPage(found, page.get("LastEvaluatedKey"))

    # ---- job transitions ---------------------------------------------------------------

    def create(
        self,
        job_id: str,
        source: SourceObject,
        options: JobOptions,
        *,
        metadata: Mapping[str, str] | None = None,
        message: str | None = None,
        execution_arn: str | None = None,
        tenant: str | None = None,
        queued_at: str | None = None,
    ) -> bool:
        """Create run 1 as QUEUED, waiting in ``tenant``'s backlog in the order of
        ``queued_at`` (the upload's time; default now). False when the job already exists
        (a duplicate).

        ``metadata`` is what travels with the results (richdoc.metadata); ``message``
        (the ingest message body) and ``execution_arn`` (the execution the run will be)
        let the sweep close a run whose execution never started.
        """
        now = self.clock()
        queued = queued_at or now
        job = Job(
            job_id=job_id,
            status=JobStatus.QUEUED,
            phase=JobPhase.QUEUED,
            run=1,
            source=source,
            options=options,
            metadata=dict(metadata) if metadata else None,
            message=message,
            execution_arn=execution_arn,
            created_at=now,
            updated_at=now,
            tenant=tenant,
            queued_at=queued,
            backlog_key=backlog_key(queued, job_id) if tenant is not None else None,
        )
        item = {**job_key(job_id), **job.to_item(), ATTEMPT_SEQ: 0, ATTEMPT_COUNTS: {}}
        try:
            with aws_errors("creating job"):
                retry_conflicts(
                    self.table.put_item, Item=item, ConditionExpression=Attr("pk").not_exists()
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                return False
            raise
        return True

    def start_next_run(
        self,
        job_id: str,
        failed_run: int,
        *,
        execution_arn: str | None = None,
        tenant: str | None = None,
        allowed: tuple[JobStatus, ...] = REDRIVABLE_STATUSES,
        backlog: BacklogKind = BacklogKind.UPLOADS,
    ) -> int:
        """Redrive: a dead-lettered (or cancelled) run N becomes QUEUED run N+1, exactly
        once, waiting at the end of ``tenant``'s backlog (the job's own tenant when None),
        in its ``backlog`` (a reprocess waits in the tenant's reprocess backlog).

        FAILED is accepted too: the redriven message of run N is the proof that its
        dead-letter send succeeded, even if marking the job DEAD_LETTERED has not
        happened yet (that mark then finds a newer run and stops). ``allowed`` widens the
        statuses run N may be in (a reprocess runs a SUCCEEDED job again). Slots run N
        still holds stay recorded until they are released (``richdoc.admission``).
        """
        now = self.clock()
        update = Update()
        if tenant is not None:
            update.set("tenant", tenant)
        self._transition(
            job_id,
            run=failed_run,
            allowed=allowed,
            status=JobStatus.QUEUED,
            update=update.set("run", failed_run + 1)
            .set("execution_arn", execution_arn)
            .set("phase", JobPhase.QUEUED)
            .set("queued_at", now)
            .set("backlog_key", backlog_key(now, job_id, backlog))
            .set(ATTEMPT_COUNTS, {})  # attempts are numbered per run
            .remove(
                "admitted_at",
                "failure",
                "stage",
                "tier",
                "shards",
                "shards_done",
                "pages",
                "started_at",
                "ended_at",
                "dead_letter",
                "cancel",
                "redrive",
            ),
        )
        return failed_run + 1

    def mark_running(self, job_id: str, run: int, execution_arn: str) -> None:
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.QUEUED, JobStatus.RUNNING),
            status=JobStatus.RUNNING,
            update=Update()
            .set("execution_arn", execution_arn)
            .set("started_at", self.clock())
            .set("phase", JobPhase.PLANNING),  # the definition's next state is Plan
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

    def shard_done(self, job_id: str, run: int, pages: PageSpan) -> None:
        """The parse of the shard of ``pages`` finished: add it to the run's finished
        shards (a string set of their text forms, so a retried or cached shard counts
        once)."""
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.RUNNING,),
            status=JobStatus.RUNNING,
            update=Update().add("shards_done", {str(pages)}),
        )

    def mark_recording(self, job_id: str, run: int) -> None:
        """Every step of the run is done; what is left is recording its success."""
        self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.RUNNING,),
            status=JobStatus.RUNNING,
            update=Update().set("phase", JobPhase.RECORDING),
        )

    def succeed(
        self,
        job_id: str,
        run: int,
        *,
        outputs: JobOutputs,
        counts: JobCounts,
        pipeline: str | None,
        page_count: int | None = None,
        detection_rules: str | None = None,
    ) -> None:
        """The run succeeded. The shard count and the source's digest are not written
        here: the plan recorded the one (``richdoc.stage.record_decision``), and the plan,
        the parse or the merge the other, when it first used the digest's artifacts
        (``richdoc.jobs.references``)."""
        update = (
            Update()
            .set("outputs", stored(outputs))
            .set("counts", stored(counts))
            .set("pipeline", pipeline)
            .set("detection_rules", detection_rules)
            .set("pages", page_count)
            .set("ended_at", self.clock())
            .set("phase", JobPhase.SUCCEEDED)
            .set("last_end", stored(RunEnd(run=run, status=JobStatus.SUCCEEDED)))
            .remove("stage")
        )
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
                update=Update()
                .set("failure", stored(recorded))
                .set("phase", JobPhase.DEAD_LETTERING),
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
                .set("phase", JobPhase.DEAD_LETTERED)
                .set("last_end", stored(RunEnd(run=run, status=JobStatus.DEAD_LETTERED)))
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

    def record_discard(self, job_id: str, run: int, message_id: str, reason: str) -> Job:
        """An operator deletes the run's dead-letter message (``message_id``) instead of
        redriving it: the job stays DEAD_LETTERED and says when and why. Recorded before
        the message is deleted, so no message disappears unexplained; StaleRun when the
        job has moved on (a newer run, another message)."""
        now = self.clock()
        written = fenced_update(
            self.table,
            job_id,
            Update()
            .set(("dead_letter", "discarded_at"), now)
            .set(("dead_letter", "discard_reason"), reason[:MAX_REASON_CHARS])
            .set("updated_at", now),
            run=run,
            allowed=(JobStatus.DEAD_LETTERED,),
            also=Attr("dead_letter.message_id").eq(message_id),
        )
        return Job.from_item(written)

    # ---- cancel and redrive (the operator's commands) --------------------------------------

    def cancel(self, job_id: str, run: int, *, by: str, reason: str | None = None) -> Job:
        """Cancel run ``run`` while it is QUEUED or RUNNING: CANCELLED, terminal, in one
        conditional write. Whichever commits first, this or the run's own completion
        (succeed, fail), wins; the other is refused (StaleRun here; JobCancelled there)."""
        now = self.clock()
        # The operator's text: cut as every reason is (a DynamoDB item holds 400 KB).
        kept = reason[:MAX_REASON_CHARS] if reason else reason
        record = CancelRecord(requested_at=now, by=by, reason=kept)
        return self._transition(
            job_id,
            run=run,
            allowed=(JobStatus.QUEUED, JobStatus.RUNNING),
            status=JobStatus.CANCELLED,
            update=Update()
            .set("cancel", stored(record))
            .set("ended_at", now)
            .set("phase", JobPhase.CANCELLED)
            .set("last_end", stored(RunEnd(run=run, status=JobStatus.CANCELLED))),
        )

    def mark_cancel_closed(self, job_id: str, run: int) -> Job:
        """A backstop closed what cancelled run ``run`` left open; StaleRun when the run is
        no longer that cancelled one, or a backstop already closed it."""
        written = fenced_update(
            self.table,
            job_id,
            Update().set(("cancel", "closed_at"), self.clock()),
            run=run,
            allowed=(JobStatus.CANCELLED,),
            also=Attr("cancel.closed_at").not_exists(),
        )
        return Job.from_item(written)

    def request_redrive(
        self, job_id: str, run: int, *, by: str, fresh_after: datetime | None = None
    ) -> Job:
        """Record that the next run of ``run`` is being requested (its message is sent
        next), unless a request of the run is already on the job and newer than
        ``fresh_after`` (a request older than that is taken as lost). StaleRun when the
        run is not the job's current one in a redrivable status, or is already requested.
        The status and ``updated_at`` stay: nothing has happened to the run yet."""
        request = RedriveRequest(from_run=run, requested_at=self.clock(), by=by)
        pending: ConditionBase = Attr("redrive").not_exists()
        if fresh_after is not None:
            pending |= Attr("redrive.requested_at").lt(timestamp(fresh_after))
        written = fenced_update(
            self.table,
            job_id,
            Update().set("redrive", stored(request)),
            run=run,
            allowed=REDRIVABLE_STATUSES,
            also=pending,
        )
        return Job.from_item(written)

    def withdraw_redrive(self, job_id: str, run: int, requested_at: str) -> None:
        """Take back a redrive request whose message could not be sent (only that one:
        conditional on its time)."""
        # StaleRun: the starter took it (next run), or another request replaced it.
        with contextlib.suppress(StaleRun):
            fenced_update(
                self.table,
                job_id,
                Update().remove("redrive"),
                run=run,
                allowed=REDRIVABLE_STATUSES,
                also=Attr("redrive.requested_at").eq(requested_at),
            )

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
            .set("phase", JobPhase.DELETED)
            .set(TTL_ATTRIBUTE, expires_at(now, self.retention_days))
            .remove("stage", "outputs", "backlog_key")
        )
        try:
            with aws_errors("deleting job"):
                written = retry_conflicts(
                    self.table.update_item,
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
        tombstone = self.create_deleted(job_id, source, mark)
        return tombstone if tombstone is not None else self.mark_deleted(job_id, mark)

    def create_deleted(self, job_id: str, source: SourceObject, mark: DeletionMark) -> Job | None:
        """Record a job that never ran as DELETED (a tombstone: the object's creation
        notification, if it arrives later, starts nothing); None when the job exists."""
        now = self.clock()
        tombstone = Job(
            job_id=job_id,
            status=JobStatus.DELETED,
            run=1,
            source=source,
            deletion=mark,
            phase=JobPhase.DELETED,
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
                retry_conflicts(
                    self.table.put_item, Item=item, ConditionExpression=Attr("pk").not_exists()
                )
        except ClientError as exc:
            if not conditional_check_failed(exc):
                raise
            return None  # the job was created meanwhile
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
        if status is not JobStatus.QUEUED:
            update.remove("backlog_key")  # a run that moved on waits in no backlog
        return Job.from_item(fenced_update(self.table, job_id, update, run=run, allowed=allowed))
