"""Operator tools against a stack: find its resources, read and delete jobs (the
dead-letter queue's operations are functions of an ``Operator`` in ``dead_letter_queue``).

The same code serves a deployed stack (AWS credentials, region and profile from the usual
AWS settings) and the embedded stack of ``richdoc local serve`` (``--endpoint-url``):
resources are found from the stack's CloudFormation outputs in both cases.
"""

from __future__ import annotations

import functools
import getpass
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from richdoc.artifacts import ArtifactStore
from richdoc.contracts import PageSpan, SourceObject
from richdoc.deletion import Deleted, Deletion
from richdoc.jobs import Attempt, Job, JobFilter, JobPage, JobStatus, JobStore, Position
from richdoc.jobs.references import DigestReferences
from richdoc_tools.ops.job_document import JobDocument
from richdoc_tools.ops.uploads import Upload, clarify_metadata, put_source

if TYPE_CHECKING:
    from types_boto3_events import EventBridgeClient
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_s3 import S3Client
    from types_boto3_sqs import SQSClient
    from types_boto3_stepfunctions import SFNClient
    from types_boto3_stepfunctions.type_defs import (
        DescribeExecutionOutputTypeDef,
        HistoryEventTypeDef,
    )


class StackNotFound(LookupError):
    pass


class AmbiguousJobId(ValueError):
    """A job id prefix that several jobs share."""

    def __init__(self, prefix: str, candidates: list[Job]) -> None:
        super().__init__(f"job id prefix {prefix!r} matches {len(candidates)} jobs")
        self.prefix = prefix
        self.candidates = candidates


JOB_ID_LENGTH = 32


@dataclass(frozen=True)
class StackResources:
    stack_name: str
    ingest_bucket: str
    artifact_bucket: str
    ingest_queue_url: str
    ingest_queue_arn: str
    dead_letter_queue_url: str
    dead_letter_queue_arn: str
    jobs_table: str
    state_machine_arn: str
    # The completion events' bus and log (None for a stack deployed before them).
    event_bus_name: str | None = None
    event_log_group: str | None = None
    # The stack's parameters as deployed (DescribeStacks), e.g. the retention days.
    parameters: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_outputs(
        cls,
        stack_name: str,
        outputs: dict[str, str],
        parameters: dict[str, str] | None = None,
    ) -> StackResources:
        return cls(
            stack_name=stack_name,
            ingest_bucket=outputs["IngestBucketName"],
            artifact_bucket=outputs["ArtifactBucketName"],
            ingest_queue_url=outputs["IngestQueueUrl"],
            ingest_queue_arn=outputs["IngestQueueArn"],
            dead_letter_queue_url=outputs["DeadLetterQueueUrl"],
            dead_letter_queue_arn=outputs["DeadLetterQueueArn"],
            jobs_table=outputs["JobsTableName"],
            state_machine_arn=outputs["StateMachineArn"],
            event_bus_name=outputs.get("EventBusName"),
            event_log_group=outputs.get("EventLogGroupName"),
            parameters=dict(parameters or {}),
        )

    def days(self, parameter: str) -> int | None:
        """A retention parameter's days (None: kept, or not known)."""
        value = self.parameters.get(parameter, "").strip()
        return int(value) if value.isdigit() and int(value) > 0 else None


@dataclass(frozen=True)
class ShardParse:
    """One page-range shard of a run's parse, as its attempts tell it."""

    run: int
    pages: PageSpan
    attempts: int
    tier: int | None  # of the last attempt
    outcome: str  # of the last attempt: ok, or the error name
    cached: bool | None  # the last attempt was answered from the artifact cache


def shard_parses(attempts: list[Attempt]) -> list[ShardParse]:
    """The shards of each run, in run and page order (none for a job parsed whole)."""
    by_shard: dict[tuple[int, PageSpan], list[Attempt]] = {}
    for attempt in sorted(attempts, key=lambda a: (a.run, a.seq)):
        if attempt.stage == "parse" and attempt.pages:
            by_shard.setdefault((attempt.run, attempt.pages), []).append(attempt)

    def order(key: tuple[int, PageSpan]) -> tuple[int, int]:
        run, pages = key
        return run, pages.start

    return [
        ShardParse(
            run=run,
            pages=pages,
            attempts=len(tried),
            tier=tried[-1].tier,
            outcome=tried[-1].outcome,
            cached=tried[-1].cached,
        )
        for (run, pages), tried in sorted(by_shard.items(), key=lambda item: order(item[0]))
    ]


class Operator:
    """The stack's resources through one boto3 session. Safe to share between threads (the
    console serves requests on several): clients are made under a lock (a session is not
    thread-safe) and then shared (clients are); each thread has its own job store (a
    resource is not)."""

    def __init__(
        self, session: boto3.Session, resources: StackResources, endpoint_url: str | None = None
    ) -> None:
        self.session = session
        self.resources = resources
        self.endpoint_url = endpoint_url
        self._lock = threading.Lock()
        self._local = threading.local()

    @classmethod
    def connect(
        cls,
        stack_name: str,
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        profile: str | None = None,
    ) -> Operator:
        session = boto3.Session(profile_name=profile, region_name=region)
        if endpoint_url and session.get_credentials() is None:
            # The embedded stack checks no credentials; boto3 still wants some to sign.
            session = boto3.Session(
                aws_access_key_id="richdoc-local",
                aws_secret_access_key="richdoc-local",
                region_name=region or "us-east-1",
            )
        elif endpoint_url and session.region_name is None:
            session = boto3.Session(profile_name=profile, region_name="us-east-1")
        cfn = session.client("cloudformation", endpoint_url=endpoint_url)
        try:
            [stack] = cfn.describe_stacks(StackName=stack_name)["Stacks"]
        except ClientError as exc:
            raise StackNotFound(f"stack {stack_name!r} not found: {exc}") from exc
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        parameters = {
            p["ParameterKey"]: p.get("ParameterValue", "") for p in stack.get("Parameters", [])
        }
        resources = StackResources.from_outputs(stack_name, outputs, parameters)
        return cls(session, resources, endpoint_url)

    @functools.cached_property
    def sqs(self) -> SQSClient:
        with self._lock:
            return self.session.client("sqs", endpoint_url=self.endpoint_url)

    @functools.cached_property
    def s3(self) -> S3Client:
        with self._lock:
            return self.session.client("s3", endpoint_url=self.endpoint_url)

    @functools.cached_property
    def stepfunctions(self) -> SFNClient:
        with self._lock:
            return self.session.client("stepfunctions", endpoint_url=self.endpoint_url)

    @functools.cached_property
    def events(self) -> EventBridgeClient:
        with self._lock:
            return self.session.client("events", endpoint_url=self.endpoint_url)

    @functools.cached_property
    def logs(self) -> CloudWatchLogsClient:
        with self._lock:
            return self.session.client("logs", endpoint_url=self.endpoint_url)

    def caller(self) -> str:
        """Who is acting, for the records a command leaves (a cancel, a redrive): the
        caller identity's ARN, or the local user when STS cannot say."""
        sts = self.session.client("sts", endpoint_url=self.endpoint_url)
        try:
            return str(sts.get_caller_identity()["Arn"])
        except (BotoCoreError, ClientError):
            return getpass.getuser()

    def find_jobs(self, job_ids: Sequence[str]) -> dict[str, Job | None]:
        """``find_job`` for each id or prefix, all resolved before anything is done with
        them (AmbiguousJobId for the first ambiguous one; the job list read once for all
        the prefixes); None for no such job."""
        listed = None
        if any(len(job_id) < JOB_ID_LENGTH for job_id in job_ids):
            listed = self.list_jobs()
        return {job_id: self.find_job(job_id, known=listed) for job_id in job_ids}

    @property
    def jobs(self) -> JobStore:
        """The job store of the calling thread."""
        store: JobStore | None = getattr(self._local, "jobs", None)
        if store is None:
            with self._lock:
                resource = self.session.resource("dynamodb", endpoint_url=self.endpoint_url)
            store = self._local.jobs = JobStore(
                resource.Table(self.resources.jobs_table),
                retention_days=self.resources.days("JobRetentionDays"),
            )
        return store

    def list_jobs(self, status: JobStatus | None = None) -> list[Job]:
        return self.jobs.list_jobs(status)

    def jobs_page(self, which: JobFilter, *, limit: int, after: Position | None = None) -> JobPage:
        return self.jobs.page(which, limit=limit, after=after)

    def count_jobs(self, statuses: Sequence[JobStatus], *, since: str | None = None) -> int:
        return self.jobs.count(statuses, since=since)

    def find_job(self, job_id: str, *, known: Sequence[Job] | None = None) -> Job | None:
        """The job with this id or unique id prefix; AmbiguousJobId when several match.

        A whole id is one read; a prefix is looked up in the job list (the status index,
        no table scan; ``known`` when the caller has listed it already), since DynamoDB
        cannot match a prefix of a partition key.
        """
        if len(job_id) >= JOB_ID_LENGTH:
            return self.jobs.get(job_id)
        listed = self.list_jobs() if known is None else known
        matches = [job for job in listed if job.job_id.startswith(job_id)]
        if len(matches) > 1:
            raise AmbiguousJobId(job_id, matches)
        return matches[0] if matches else None

    def show_job(self, job_id: str) -> JobDocument | None:
        """The job with this id or unique id prefix and its attempts (AmbiguousJobId)."""
        job = self.find_job(job_id)
        if job is None:
            return None
        return JobDocument(job=job, attempts=self.jobs.attempts.of_job(job.job_id))

    # ---- executions, artifacts, sources ------------------------------------------------

    def execution(self, execution_arn: str) -> DescribeExecutionOutputTypeDef:
        return self.stepfunctions.describe_execution(executionArn=execution_arn)

    def execution_history(self, execution_arn: str) -> list[HistoryEventTypeDef]:
        """Every event of an execution, oldest first."""
        pages = self.stepfunctions.get_paginator("get_execution_history").paginate(
            executionArn=execution_arn
        )
        return [event for page in pages for event in page["events"]]

    def definition(self, execution_arn: str | None = None) -> dict[str, Any]:
        """The state machine definition an execution ran (the stack's current one when no
        execution is given), as deployed."""
        if execution_arn:
            text = self.stepfunctions.describe_state_machine_for_execution(
                executionArn=execution_arn
            )["definition"]
        else:
            text = self.stepfunctions.describe_state_machine(
                stateMachineArn=self.resources.state_machine_arn
            )["definition"]
        definition: dict[str, Any] = json.loads(text)
        return definition

    def artifact(self, key: str) -> bytes:
        """An object of the artifact bucket (docling, projection, detection JSON)."""
        return ArtifactStore(self.s3, self.resources.artifact_bucket).get_bytes(key)

    def source(self, source: SourceObject) -> bytes:
        """The uploaded object version a job is about."""
        body: bytes = self.s3.get_object(**source.get_kwargs())["Body"].read()
        return body

    def upload(self, key: str, body: bytes | IO[bytes], *, clarify: bool) -> Upload:
        """Drop a file into the ingest bucket (``aws s3 cp`` with the clarify metadata)."""
        return put_source(
            self.s3, self.resources.ingest_bucket, key, body, clarify_metadata(clarify)
        )

    # ---- deletion ----------------------------------------------------------------------

    def delete_job(self, job_id: str, *, with_source: bool = False) -> Deleted | None:
        """Delete a job (whole id or unique prefix) and what was derived from it, as the
        removal of its source object does; ``with_source`` deletes that object version
        too, for good (its notification then finds the job deleted already). None when
        there is no such job."""
        job = self.find_job(job_id)
        if job is None:
            return None
        jobs = self.jobs
        deletion = Deletion(
            jobs=jobs,
            references=DigestReferences(
                jobs.table, retention_days=self.resources.days("ParseArtifactRetentionDays")
            ),
            artifacts=ArtifactStore(self.s3, self.resources.artifact_bucket),
        )
        command = "richdoc jobs delete" + (" --with-source" if with_source else "")
        deleted = deletion.delete_job(job.job_id, by="operator", reason=command)
        source = job.source
        if with_source and source.version_id:
            self.s3.delete_object(Bucket=source.bucket, Key=source.key, VersionId=source.version_id)
        return deleted
