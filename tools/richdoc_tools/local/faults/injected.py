"""Injected faults: the embedded stack failing at a rate, the way AWS fails, reproducibly.

``richdoc run --faults RATE[,seed=N]`` (``StackSettings(injected_faults=FaultSettings(...))``)
makes two kinds of draws, each a fault with probability RATE:

* **Every AWS call** of a function or of a state machine task (the request gate,
  ``patches.request_gate``) can be throttled, with the service's own throttling error
  (S3 ``SlowDown`` 503, DynamoDB ``ProvisionedThroughputExceededException`` or
  ``ThrottlingException``, SQS and Step Functions ``ThrottlingException``), or fail with a
  real 5xx (``InternalError``/``InternalServerError``/``ServiceUnavailable``). botocore
  retries both, as on AWS; the Lambda task clients of Step Functions do not retry, its
  Retry blocks do.
* **Every Lambda invocation** (``runtime.lambdas.LambdaRuntime.invoke`` asks
  ``invocations``) can be refused before it runs (``Lambda.TooManyRequestsException``,
  ``Lambda.ServiceException``), dropped, or crash while it runs. What a drop means
  depends on who invoked, as on AWS: a state machine task's synchronous invocation that
  never answers fails the task with ``Lambda.ClientExecutionTimeoutException`` (one of
  the Lambda service errors Step Functions' guide says to retry); the SQS event source's
  batch is not deleted and comes back after its visibility timeout; an asynchronous
  event (EventBridge's reconcile and sweep) is lost, never retried, and left to the
  sweep. A crash happens at the invocation's k-th AWS call (or at its return): that call
  is made, the sandbox dies, every later call of the invocation is refused, and its
  caller gets ``Lambda.ServiceException`` at once (``Sandbox.Timedout`` at the parse
  tiers whose timeout escalates to the next tier: ``TIMEOUT_ESCALATES``); the handler's
  thread runs on unheard, as a dead sandbox's would not (it can no longer reach AWS).

Each draw is a hash of (seed, the source object's key, the stage, the pages, the attempt,
the call's ordinal within the invocation), never a shared random stream: threads
interleave, and moto's version ids (hence job ids) are random, so only what the work *is*
decides. The attempt counts the invocations of the same (stage, key, pages). A starter
batch is decided on its records' keys (which messages SQS puts in one batch depends on
timing).

A test's scripted failures (``scripted.FailureScript``) are the other kind, for targeted
tests; both can be on at once.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import unquote_plus

from pydantic import ValidationError

from richdoc.contracts import PageSpan
from richdoc_tools.local.requests.callers import Invocation
from richdoc_tools.local.requests.service_errors import ServiceErrorResponse
from richdoc_tools.local.requests.service_request import ServiceRequest

# The parse tiers whose task escalates Sandbox.Timedout to the next tier (the top tier's
# dead-letters it: a timeout there is a real resource limit, never a platform fault).
TIMEOUT_ESCALATES = frozenset({"ParseTier1Function", "ParseTier2Function"})
# A crash happens at one of the invocation's first CRASH_CALLS AWS calls (or at return).
CRASH_CALLS = 8
STATE_MACHINE_STAGE = "StateMachine"


class FaultsUsageError(ValueError):
    """``--faults`` was not RATE[,seed=N]."""


@dataclass(frozen=True)
class FaultSettings:
    rate: float
    seed: int = 0

    @classmethod
    def parse(cls, text: str) -> FaultSettings:
        """``"0.05"`` or ``"0.05,seed=7"`` (a rate from 0 to 1)."""
        rate_text, *options = [part.strip() for part in text.split(",")]
        try:
            rate = float(rate_text)
        except ValueError:
            raise FaultsUsageError(f"not a rate from 0 to 1: {rate_text!r}") from None
        if not 0.0 <= rate <= 1.0:
            raise FaultsUsageError(f"not a rate from 0 to 1: {rate_text!r}")
        seed = 0
        for option in options:
            match = re.fullmatch(r"seed=(-?\d+)", option)
            if match is None:
                raise FaultsUsageError(f"not seed=N: {option!r}")
            seed = int(match[1])
        return cls(rate=rate, seed=seed)

    def __str__(self) -> str:
        return f"{self.rate:g},seed={self.seed}"


class FaultKind(StrEnum):
    THROTTLE = "throttle"  # an AWS call throttled
    SERVER_ERROR = "5xx"  # an AWS call failed with a 5xx
    INVOKE_THROTTLE = "invoke throttle"  # Lambda.TooManyRequestsException
    INVOKE_ERROR = "invoke error"  # Lambda.ServiceException before the handler ran
    CRASH = "sandbox crash"  # the sandbox died while the handler ran
    DROPPED = "dropped invocation"


class Integration(StrEnum):
    """Who invoked a function, as its event shows (each treats a lost invocation its
    own way)."""

    TASK = "task"  # a state machine task, synchronously
    QUEUE = "queue"  # the SQS event source mapping
    STREAM = "stream"  # a DynamoDB stream event source mapping
    ASYNC = "async"  # EventBridge, asynchronously


# service -> (throttling error code, HTTP status)
THROTTLES: dict[str, tuple[tuple[str, int], ...]] = {
    "s3": (("SlowDown", 503),),
    "dynamodb": (("ProvisionedThroughputExceededException", 400), ("ThrottlingException", 400)),
    "sqs": (("ThrottlingException", 400),),
    "stepfunctions": (("ThrottlingException", 400),),
}
SERVER_ERRORS: dict[str, tuple[tuple[str, int], ...]] = {
    "s3": (("InternalError", 500), ("ServiceUnavailable", 503)),
    "dynamodb": (("InternalServerError", 500),),
    "sqs": (("InternalError", 500),),
    "stepfunctions": (("InternalFailure", 500),),
}
DEFAULT_THROTTLES = (("ThrottlingException", 400),)
DEFAULT_SERVER_ERRORS = (("InternalFailure", 500),)


class SandboxCrashed(BaseException):
    """Raised on a crashed invocation's own thread at its next AWS call: like a dead
    sandbox, it stops the handler wherever it is (no ``except Exception`` catches it)."""


@dataclass(frozen=True)
class InvocationFault:
    kind: FaultKind
    error_type: str  # what the invocation's caller gets
    message: str
    crash_at: int = 0  # CRASH: the ordinal of the AWS call the sandbox dies after


@dataclass
class _Running:
    """What the injector tracks of one running invocation."""

    invocation: Invocation
    crash: InvocationFault | None = None
    calls: int = 0
    crashed: threading.Event = field(default_factory=threading.Event)
    wake: threading.Event | None = None  # the runtime's: set when the sandbox crashes


def integration_of(event: Any) -> Integration:
    if isinstance(event, dict):
        records = event.get("Records")
        first = records[0] if isinstance(records, list) and records else None
        if isinstance(first, dict) and first.get("eventSource") == "aws:sqs":
            return Integration.QUEUE
        if isinstance(first, dict) and first.get("eventSource") == "aws:dynamodb":
            return Integration.STREAM
        if "detail-type" in event:
            return Integration.ASYNC
    return Integration.TASK


def _sqs_keys(event: Mapping[str, Any]) -> list[str]:
    keys = []
    for record in event.get("Records", []):
        try:
            body = json.loads(record.get("body") or "{}")
        except json.JSONDecodeError:
            continue
        for s3_record in body.get("Records", []) if isinstance(body, dict) else []:
            key = s3_record.get("s3", {}).get("object", {}).get("key")
            if isinstance(key, str):
                keys.append(unquote_plus(key))
    return sorted(keys)


def _stream_keys(event: Mapping[str, Any]) -> list[str]:
    """The source keys of the job items a stream batch carries."""
    keys = []
    for record in event.get("Records", []):
        image = record.get("dynamodb", {}).get("NewImage", {})
        key = image.get("source", {}).get("M", {}).get("key", {}).get("S")
        if isinstance(key, str):
            keys.append(key)
    return sorted(keys)


def _pages(event: Mapping[str, Any]) -> str:
    """A shard's page range as its text (``51-100``); "" for anything else."""
    try:
        return str(PageSpan.model_validate(event.get("pages")))
    except ValidationError:
        return ""


class FaultInjector:
    """Decides and counts the faults of one stack (``settings`` None: none, only the
    bookkeeping the transaction holds and tests use)."""

    def __init__(self, settings: FaultSettings | None = None) -> None:
        self.settings = settings
        self.injected: Counter[tuple[str, str]] = Counter()  # (kind, service) -> count
        self.retried_invocations = 0
        self._attempts: Counter[tuple[str, str, str]] = Counter()
        self._keys: dict[str, str] = {}  # job id -> source key (from executions' inputs)
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.settings is not None and self.settings.rate > 0

    # ---- what an invocation works on ----------------------------------------------------

    def learn_job(self, execution_input: Any) -> str:
        """The source key of an execution's job (its input names both); returns it."""
        key = ""
        if isinstance(execution_input, dict):
            source = execution_input.get("source")
            if isinstance(source, dict) and isinstance(source.get("key"), str):
                key = source["key"]
            job_id = execution_input.get("job_id")
            if isinstance(job_id, str) and key:
                with self._lock:
                    self._keys[job_id] = key
        return key

    def work_of(self, logical_id: str, event: Any) -> tuple[str, str, str]:
        """(stage, key, pages) of one invocation's event."""
        if not isinstance(event, dict):
            return logical_id, "", ""
        integration = integration_of(event)
        if integration is Integration.QUEUE:
            return logical_id, "\n".join(_sqs_keys(event)), ""
        if integration is Integration.STREAM:
            return logical_id, "\n".join(_stream_keys(event)), ""
        if integration is Integration.ASYNC:
            if event.get("detail-type") == "Scheduled Event":
                return f"{logical_id}:sweep", "", ""
            detail = event.get("detail") or {}
            try:
                execution_input = json.loads(detail.get("input") or "{}")
            except (TypeError, json.JSONDecodeError):
                execution_input = {}
            return f"{logical_id}:reconcile", self.learn_job(execution_input), ""
        stage = logical_id
        if isinstance(event.get("action"), str):
            stage = f"{logical_id}:{event['action']}"
        source = event.get("source")
        key = source.get("key") if isinstance(source, dict) else None
        if not isinstance(key, str):
            with self._lock:
                key = self._keys.get(str(event.get("job_id")), "")
        return stage, key, _pages(event)

    # ---- invocations ----------------------------------------------------------------------

    def begin(self, stage: str, key: str, pages: str) -> Invocation:
        """A new invocation of (stage, key, pages), numbered among its attempts."""
        with self._lock:
            self._attempts[(stage, key, pages)] += 1
            attempt = self._attempts[(stage, key, pages)]
            if attempt > 1:
                self.retried_invocations += 1
            invocation = Invocation(
                id=uuid.uuid4().hex, stage=stage, key=key, pages=pages, attempt=attempt
            )
            self._running[invocation.id] = _Running(invocation)
        return invocation

    def running(self, invocation_id: str) -> Invocation | None:
        with self._lock:
            running = self._running.get(invocation_id)
        return running.invocation if running is not None else None

    def end(self, invocation: Invocation) -> None:
        with self._lock:
            self._running.pop(invocation.id, None)

    def invocation_fault(
        self, invocation: Invocation, logical_id: str, integration: Integration
    ) -> InvocationFault | None:
        """The fault this invocation meets before (or while) it runs, if any."""
        if not self._draw(invocation, 0, "invoke"):
            return None
        kinds = [FaultKind.INVOKE_THROTTLE, FaultKind.INVOKE_ERROR, FaultKind.CRASH]
        if integration is not Integration.ASYNC:  # async drops are decided on delivery
            kinds.append(FaultKind.DROPPED)
        kind = kinds[self._pick(invocation, 0, "invoke-kind", len(kinds))]
        if kind is FaultKind.INVOKE_THROTTLE:
            fault = InvocationFault(kind, "Lambda.TooManyRequestsException", "Rate Exceeded.")
        elif kind is FaultKind.INVOKE_ERROR:
            fault = InvocationFault(
                kind, "Lambda.ServiceException", "Lambda encountered an internal error."
            )
        elif kind is FaultKind.DROPPED:
            fault = InvocationFault(
                kind,
                "Lambda.ClientExecutionTimeoutException",
                "the invocation was lost: no response before the client's timeout",
            )
        else:
            timeout = logical_id in TIMEOUT_ESCALATES and self._pick(
                invocation, 0, "crash-timeout", 2
            )
            fault = InvocationFault(
                kind,
                "Sandbox.Timedout" if timeout else "Lambda.ServiceException",
                "the sandbox stopped responding" if timeout else "the sandbox crashed",
                crash_at=1 + self._pick(invocation, 0, "crash-at", CRASH_CALLS),
            )
            with self._lock:
                running = self._running.get(invocation.id)
                if running is not None:
                    running.crash = fault
        self._count(kind, "lambda")
        return fault

    def drops_async(self, stage: str, key: str) -> bool:
        """Is this asynchronous event lost before Lambda runs it (its first attempt)?"""
        if not self.enabled:
            return False
        probe = Invocation(id="", stage=stage, key=key, pages="", attempt=1)
        if self._draw(probe, 0, "async-drop"):
            self._count(FaultKind.DROPPED, "lambda")
            return True
        return False

    def crashed(self, invocation: Invocation, wake: threading.Event) -> threading.Event | None:
        """The event set when the invocation's planned crash happens (None: none is
        planned); ``wake`` is set with it. A crash the invocation makes too few calls to
        reach happens as it returns: the runtime sets the event itself then."""
        with self._lock:
            running = self._running.get(invocation.id)
            if running is None or running.crash is None:
                return None
            running.wake = wake
            return running.crashed

    # ---- the AWS calls ----------------------------------------------------------------------

    def check(self, request: ServiceRequest, on_own_thread: bool) -> None:
        """The request gate's check: refuse a crashed invocation's calls; throttle or fail
        this one if its draw says so. ``on_own_thread``: the gate runs on the calling
        handler's thread (in-process), where a crash can stop the handler at once."""
        if request.invocation_id is None:
            return
        if request.service == "lambda" and request.operation == "Invoke":
            return  # an invocation's faults are the runtime's (invocation_fault)
        with self._lock:
            running = self._running.get(request.invocation_id)
            if running is None:
                return
            running.calls += 1
            ordinal = running.calls
        if running.crashed.is_set():
            if on_own_thread:
                raise SandboxCrashed(running.invocation.stage)
            raise ServiceErrorResponse(
                request.service, 500, "InternalFailure", "the caller's sandbox is gone"
            )
        if running.crash is not None and ordinal >= running.crash.crash_at:
            running.crashed.set()  # this call goes through; the sandbox dies after it
            if running.wake is not None:
                running.wake.set()
            return
        invocation = running.invocation
        if not self._draw(invocation, ordinal, "call"):
            return
        throttle = self._pick(invocation, ordinal, "call-kind", 2) == 0
        table = THROTTLES if throttle else SERVER_ERRORS
        default = DEFAULT_THROTTLES if throttle else DEFAULT_SERVER_ERRORS
        choices = table.get(request.service, default)
        code, status = choices[self._pick(invocation, ordinal, "call-code", len(choices))]
        self._count(FaultKind.THROTTLE if throttle else FaultKind.SERVER_ERROR, request.service)
        message = "Rate exceeded" if throttle else "We encountered an internal error."
        raise ServiceErrorResponse(request.service, status, code, f"{message} (injected)")

    # ---- draws ------------------------------------------------------------------------------

    def _hash(self, invocation: Invocation, ordinal: int, salt: str) -> int:
        seed = self.settings.seed if self.settings else 0
        text = "\x1f".join(
            (
                str(seed),
                invocation.key,
                invocation.stage,
                invocation.pages,
                str(invocation.attempt),
                str(ordinal),
                salt,
            )
        )
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")

    def _draw(self, invocation: Invocation, ordinal: int, salt: str) -> bool:
        if not self.enabled or self.settings is None:
            return False
        return self._hash(invocation, ordinal, salt) / 2**64 < self.settings.rate

    def _pick(self, invocation: Invocation, ordinal: int, salt: str, choices: int) -> int:
        return self._hash(invocation, ordinal, salt) % choices

    def _count(self, kind: FaultKind, service: str) -> None:
        with self._lock:
            self.injected[(str(kind), service)] += 1

    def report(self) -> str:
        """One line on what was injected: the settings, the counts by kind and service,
        the invocations that ran again."""
        summary = self.summary()
        total = sum(summary.values())
        counts = ", ".join(f"{n} {what}" for what, n in summary.items()) or "none"
        return (
            f"injected faults ({self.settings or 'off'}): {total} in all: {counts}; "
            f"{self.retried_invocations} invocation(s) ran again"
        )

    def summary(self) -> dict[str, int]:
        """Faults injected so far, ``"<kind> (<service>)"`` -> count, sorted."""
        with self._lock:
            counted = sorted(self.injected.items())
        return {f"{kind} ({service})": n for (kind, service), n in counted}
