"""A stack's resources and its clients: the ``Operator`` every operator's service takes.

The same code serves a deployed stack (AWS credentials, region and profile from the usual
AWS settings) and the embedded stack of ``richdoc local serve`` (``--endpoint-url``):
resources are found from the stack's CloudFormation outputs in both cases.

The services themselves (finding, showing and deleting jobs, cancel, redrive, the
dead-letter queue, executions, events, ...) are functions of an ``Operator`` in modules
of their own; they import this module for its type, and it imports none of them.
"""

from __future__ import annotations

import functools
import getpass
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from richdoc.admission.settings import AdmissionSettings
from richdoc.jobs import JobStore

if TYPE_CHECKING:
    from types_boto3_events import EventBridgeClient
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_s3 import S3Client
    from types_boto3_sqs import SQSClient
    from types_boto3_stepfunctions import SFNClient


class StackNotFound(LookupError):
    pass


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
    # What the notifier could not deliver: the records, and a message for each.
    notify_failure_queue_url: str | None = None
    notify_failure_bucket: str | None = None
    # The stack's parameters as deployed (DescribeStacks), e.g. the retention days.
    parameters: dict[str, str] = field(default_factory=dict)
    # Admission's capacity and each tenant's share (None for a stack deployed before it).
    admission: AdmissionSettings | None = None

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
            notify_failure_queue_url=outputs.get("NotifyFailureQueueUrl"),
            notify_failure_bucket=outputs.get("NotifyFailureBucketName"),
            parameters=dict(parameters or {}),
            admission=(
                AdmissionSettings.of(
                    int(outputs["MaxRunningJobs"]), int(outputs.get("MaxRunningJobsPerTenant", 0))
                )
                if outputs.get("MaxRunningJobs", "").isdigit()
                else None
            ),
        )

    def days(self, parameter: str) -> int | None:
        """A retention parameter's days (None: kept, or not known)."""
        value = self.parameters.get(parameter, "").strip()
        return int(value) if value.isdigit() and int(value) > 0 else None


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
