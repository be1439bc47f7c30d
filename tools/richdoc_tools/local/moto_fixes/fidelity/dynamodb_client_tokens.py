"""A TransactWriteItems repeated with its ``ClientRequestToken`` changes nothing again, as
DynamoDB's does.

What moto does: it ignores ``ClientRequestToken``. A transaction sent again with the same
token (a retry whose first attempt committed, its answer lost) is applied again: its
conditions fail where they guard, and its unconditional parts (an ``ADD``) count twice.

What AWS does: "Providing a ClientRequestToken makes the call to TransactWriteItems
idempotent, meaning that multiple identical calls have the same effect as one single
call. ... A client request token is valid for 10 minutes after the first request that
uses it is completed. After 10 minutes, any request with the same client token is
treated as a new request. ... If you submit a request with the same client token but a
change in other parameters within the 10-minute idempotency window, DynamoDB returns an
IdempotentParameterMismatch exception" (DynamoDB API Reference, TransactWriteItems,
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
A call that failed did nothing: the same call again is applied. botocore fills the token
in when the caller gives none, and sends the same one again on each of its retries. (A
second call while the first is under way, DynamoDB's ``TransactionInProgressException``,
cannot happen here: the stack applies one DynamoDB request at a time.)

The fix: a transaction that committed with a token is remembered (its parameters'
fingerprint) for ten minutes; the same token with the same parameters is answered as a
success without writing anything, with other parameters refused as DynamoDB refuses it.

Stock moto's test: ``tests/aws/moto_fixes/test_fidelity_dynamodb_client_tokens.py``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.core.responses import ActionResult
    from moto.dynamodb.responses import DynamoHandler

TARGET = "moto.dynamodb.responses.DynamoHandler.transact_write_items"
PATCHED = (TARGET,)

# How long DynamoDB remembers a token after its transaction completed.
WINDOW_S = 600.0
_ERROR_PREFIX = "com.amazonaws.dynamodb.v20120810#"


class ClientTokens:
    """The tokens of the transactions committed in the last ``WINDOW_S``, with their
    parameters' fingerprints."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._committed: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def committed(self, token: str, fingerprint: str) -> bool:
        """Whether a transaction with ``token`` committed within the window (one with
        other parameters: ``IdempotentParameterMismatchException``)."""
        now = self.clock()
        with self._lock:
            for old in [t for t, (_, at) in self._committed.items() if now - at > WINDOW_S]:
                del self._committed[old]
            seen = self._committed.get(token)
        if seen is None:
            return False
        if seen[0] != fingerprint:
            raise _error(
                "IdempotentParameterMismatchException",
                "The request uses the same client token as a previous, but non-identical request.",
            )
        return True

    def commit(self, token: str, fingerprint: str) -> None:
        with self._lock:
            self._committed[token] = (fingerprint, self.clock())


def _error(code: str, message: str) -> Exception:
    from moto.dynamodb.exceptions import DynamodbException

    return DynamodbException(_ERROR_PREFIX + code, message)


def fingerprint(body: dict[str, Any]) -> str:
    """The request's parameters but its token, as one digest."""
    others = {name: value for name, value in body.items() if name != "ClientRequestToken"}
    return hashlib.sha256(json.dumps(others, sort_keys=True).encode()).hexdigest()


def idempotent(
    transact: Callable[[DynamoHandler], ActionResult], tokens: ClientTokens
) -> Callable[[DynamoHandler], ActionResult]:
    @functools.wraps(transact)
    def transact_write_items(handler: DynamoHandler) -> ActionResult:
        from moto.core.responses import ActionResult

        token = handler.body.get("ClientRequestToken")
        if not token:
            return transact(handler)
        digest = fingerprint(handler.body)
        if tokens.committed(token, digest):
            # The same success again, nothing written again.
            return ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})
        answer = transact(handler)  # a cancelled transaction raises: nothing remembered
        tokens.commit(token, digest)
        return answer

    return transact_write_items


def install(exit_stack: contextlib.ExitStack, tokens: ClientTokens | None = None) -> None:
    """Tokens remembered (in ``tokens``, or a fresh memory) until ``exit_stack`` closes."""
    replace(exit_stack, TARGET, idempotent(original(TARGET), tokens or ClientTokens()))
