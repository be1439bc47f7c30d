"""Scripted failures: what a test makes fail, exactly where it says, one at a time.

A ``FailureScript`` makes the Lambda platform fail chosen invocations before the handler
runs (a throttle, a service error, an out-of-memory kill at start), to exercise the state
machine's routes; errors raised by handlers come from running the real handlers. It also
scripts failures of SQS SendMessage to a chosen queue (``fail_sends``; the stack applies
them in moto's SQS backend, ``patches.sqs_send_failures``), whoever sends: the state
machine's dead-letter task or a Lambda handler. Each scripted failure is consumed by the
first invocation (or request) it matches.

Injected faults (``injected``) are the other kind: drawn at a rate. Both can be on at once.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PlatformError:
    """An error raised by the Lambda platform instead of the handler."""

    error_type: str  # e.g. Sandbox.Timedout, Runtime.OutOfMemory, Lambda.ServiceException
    message: str = ""


@dataclass(frozen=True)
class ServiceError:
    """An error an AWS API answers instead of doing the call (SQS SendMessage here).

    The emulation answers it with HTTP 400 (moto takes the status from the service's error
    model, which has no 5xx errors), so boto3 does not retry it on its own: each scripted
    error fails exactly one request.
    """

    code: str = "InternalError"
    message: str = "We encountered an internal error. Please try again."


EventMatcher = Callable[[Any], bool]


@dataclass
class FailureScript:
    """Scripted outcomes per function logical id, consumed one per invocation (only by
    invocations whose event ``when`` accepts, if given), and failures of SQS SendMessage
    per queue logical id, consumed one per request."""

    _invocations: dict[str, deque[tuple[PlatformError, EventMatcher | None]]] = field(
        default_factory=lambda: defaultdict(deque)
    )
    _sends: dict[str, deque[ServiceError]] = field(default_factory=lambda: defaultdict(deque))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(
        self, logical_id: str, *failures: PlatformError, when: EventMatcher | None = None
    ) -> None:
        with self._lock:
            self._invocations[logical_id].extend((failure, when) for failure in failures)

    def take(self, logical_id: str, event: Any = None) -> PlatformError | None:
        with self._lock:
            queue = self._invocations.get(logical_id, deque())
            for i, (failure, when) in enumerate(queue):
                if when is None or when(event):
                    del queue[i]
                    return failure
            return None

    def fail_sends(self, queue_logical_id: str, *errors: ServiceError) -> None:
        """The next ``len(errors)`` SendMessage requests to the queue fail with these."""
        with self._lock:
            self._sends[queue_logical_id].extend(errors)

    def take_send(self, queue_logical_id: str) -> ServiceError | None:
        with self._lock:
            queue = self._sends.get(queue_logical_id)
            return queue.popleft() if queue else None

    def pending_sends(self, queue_logical_id: str) -> int:
        with self._lock:
            return len(self._sends.get(queue_logical_id, ()))

    def clear(self) -> None:
        with self._lock:
            self._invocations.clear()
            self._sends.clear()
