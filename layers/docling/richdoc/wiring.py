"""What every handler is wired to: the AWS clients and the stores over them.

Each is built on first use, from the function's environment (template.yaml sets it), and
kept for the life of the execution environment: a warm invocation reuses it, and a
handler that never needs one never builds it. Every handler takes them from ``wiring``
(``functions/*/app.py``, and ``richdoc.stage`` for the steps) and builds nothing of its
own.

``reset`` forgets them all, as a new execution environment would: the embedded stack
resets when it starts and stops (its handlers are threads of one process that outlives
it), and the tests before each test.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import boto3

from richdoc.artifacts import ArtifactStore
from richdoc.deletion import Deletion
from richdoc.jobs import JobStore
from richdoc.jobs.references import DigestReferences

if TYPE_CHECKING:
    from types_boto3_dynamodb import DynamoDBServiceResource
    from types_boto3_events import EventBridgeClient
    from types_boto3_s3 import S3Client
    from types_boto3_sqs import SQSClient
    from types_boto3_stepfunctions import SFNClient

    from richdoc.admission.backlog import Backlog
    from richdoc.admission.settings import AdmissionSettings
    from richdoc.admission.slots import SlotLedger

T = TypeVar("T")


class Wiring:
    """Each property builds its dependency on first use and returns the same one after."""

    def __init__(self) -> None:
        # One lock for all: the embedded stack runs handlers side by side as threads, and
        # boto3's default session is not thread-safe. Reentrant: a store builds its client.
        self._lock = threading.RLock()
        self._built: dict[str, Any] = {}

    def _once(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name not in self._built:
                self._built[name] = build()
            return cast(T, self._built[name])

    def reset(self) -> None:
        """Forget everything built (the environment it was built from has changed)."""
        with self._lock:
            self._built.clear()

    # ---- the AWS clients ---------------------------------------------------------------

    @property
    def s3(self) -> S3Client:
        return self._once("s3", lambda: boto3.client("s3"))

    @property
    def sqs(self) -> SQSClient:
        return self._once("sqs", lambda: boto3.client("sqs"))

    @property
    def sfn(self) -> SFNClient:
        return self._once("sfn", lambda: boto3.client("stepfunctions"))

    @property
    def events(self) -> EventBridgeClient:
        return self._once("events", lambda: boto3.client("events"))

    @property
    def dynamodb(self) -> DynamoDBServiceResource:
        return self._once("dynamodb", lambda: boto3.resource("dynamodb"))

    # ---- the stores over them ----------------------------------------------------------

    @property
    def jobs(self) -> JobStore:
        return self._once("jobs", lambda: JobStore.from_env(self.dynamodb))

    @property
    def artifacts(self) -> ArtifactStore:
        return self._once("artifacts", lambda: ArtifactStore.from_env(self.s3))

    @property
    def references(self) -> DigestReferences:
        return self._once("references", lambda: DigestReferences.from_env(self.jobs.table))

    @property
    def deletion(self) -> Deletion:
        return self._once(
            "deletion",
            lambda: Deletion(jobs=self.jobs, references=self.references, artifacts=self.artifacts),
        )

    # Admission's modules are imported by the handlers that use them (the starter, the
    # dispatcher, the records), not at every step's cold start.
    @property
    def admission(self) -> AdmissionSettings:
        from richdoc.admission.settings import AdmissionSettings

        return self._once("admission", AdmissionSettings.from_env)

    @property
    def ledger(self) -> SlotLedger:
        from richdoc.admission.slots import SlotLedger

        return self._once(
            "ledger", lambda: SlotLedger(self.jobs.table, self.admission, self.jobs.clock)
        )

    @property
    def backlog(self) -> Backlog:
        from richdoc.admission.backlog import Backlog

        return self._once("backlog", lambda: Backlog(self.jobs.table, self.jobs.clock))

    def artifacts_of(self, job_id: str) -> ArtifactStore:
        """The artifact store for one job's parse: it registers the job as a user of its
        bytes' parse artifacts before it reads or writes them (richdoc.jobs.references)."""
        return self.artifacts.for_user(lambda sha256: self.references.register(sha256, job_id))


wiring = Wiring()
