"""Reserved concurrency as Lambda enforces it: an invocation beyond it is throttled.

On AWS a function with reserved concurrency N runs at most N invocations at once, and
the (N+1)-th is refused at once: the Invoke API answers HTTP 429
``TooManyRequestsException`` (reason ``ReservedFunctionConcurrentInvocationLimitExceeded``).
Nothing queues it. Each caller then does what AWS's does with a throttle: Step Functions
fails the task with ``Lambda.TooManyRequestsException`` (the definition's Retry decides),
the SQS event source leaves the batch on the queue for its visibility timeout (the
receive counts toward ``maxReceiveCount``), Lambda's asynchronous queue retries the event
without counting a retry, and a stream event source retries the batch.

``ReservedConcurrency`` counts each function's invocations in flight, from the moment one
is accepted until it returns; this machine's own limit (cores) is a separate wait, taken
after the count (``runtime.lambdas``). A throttled caller that tries again (a stream's
batch, an asynchronous event) waits on ``room_made``, notified each time an invocation
ends, rather than polling.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from collections.abc import Iterator, Mapping

from richdoc_tools.local.runtime.loops import Signal

THROTTLE_REASON = "ReservedFunctionConcurrentInvocationLimitExceeded"
# Notified each time an invocation with a reservation ends: a throttled caller waits on it.
room_made = Signal()
# The longest a throttled caller waits for ``room_made`` before it looks again.
THROTTLED_WAIT_S = 1.0


def too_many_requests() -> Exception:
    """The Invoke API's answer to an invocation beyond the reserved concurrency, as moto
    serves an error (HTTP 429, the body AWS answers: reason and type beside the message).
    moto is imported here, not at the top: the stack imports this module before it sets
    the emulation's environment."""
    from moto.core.exceptions import JsonRESTError

    message = "Rate Exceeded."
    error = JsonRESTError("TooManyRequestsException", message)
    error.code = 429
    error.description = json.dumps(
        {
            "__type": "TooManyRequestsException",
            "message": message,
            "Reason": THROTTLE_REASON,
            "Type": "User",
        }
    )
    return error


def is_throttle(error: BaseException) -> bool:
    """A boto3 ``ClientError`` that is Lambda's throttle."""
    response = getattr(error, "response", None)
    if not isinstance(response, Mapping):
        return False
    code = str(response.get("Error", {}).get("Code"))
    return code == "TooManyRequestsException"


class ReservedConcurrency:
    """Invocations in flight per function (logical id), refused beyond its reservation;
    ``throttled`` counts the refusals (Lambda's ``Throttles`` metric)."""

    def __init__(self, reserved: Mapping[str, int]) -> None:
        self.reserved = dict(reserved)
        self.throttled: Counter[str] = Counter()
        self._in_flight: Counter[str] = Counter()
        self._lock = threading.Lock()

    def in_flight(self, logical_id: str) -> int:
        with self._lock:
            return self._in_flight[logical_id]

    @contextlib.contextmanager
    def invocation(self, logical_id: str) -> Iterator[None]:
        """One invocation in flight for the block; ``too_many_requests()`` is raised when
        the function already runs as many as it reserves."""
        with self._lock:
            limit = self.reserved.get(logical_id)
            if limit is not None and self._in_flight[logical_id] >= limit:
                self.throttled[logical_id] += 1
                raise too_many_requests()
            self._in_flight[logical_id] += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight[logical_id] -= 1
            if limit is not None:
                room_made.notify()
