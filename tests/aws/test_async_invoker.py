"""Lambda's asynchronous invocation, as the embedded stack runs it
(richdoc_tools.local.runtime.async_invocations.AsyncInvoker): a throttled event stays in
Lambda's queue and is tried again, and only function errors spend the retries."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any, cast

from botocore.exceptions import ClientError
from richdoc_tools.local.runtime.async_invocations import AsyncInvoker

FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:records"


class StandInFunction:
    """Invoke answers: first ``throttles`` throttles, then ``errors`` function errors, then
    success; ``invoked`` counts the invocations that ran."""

    def __init__(self, throttles: int, errors: int = 0) -> None:
        self.throttles, self.errors, self.invoked = throttles, errors, 0
        missing = type("ResourceNotFoundException", (Exception,), {})
        self.exceptions = SimpleNamespace(ResourceNotFoundException=missing)

    def get_function_event_invoke_config(self, FunctionName: str) -> dict[str, Any]:
        return {"MaximumRetryAttempts": 2}

    def invoke(self, FunctionName: str, Payload: bytes) -> dict[str, Any]:
        if self.throttles:
            self.throttles -= 1
            error = {"Code": "TooManyRequestsException", "Message": "Rate Exceeded."}
            raise ClientError(cast(Any, {"Error": error}), "Invoke")
        self.invoked += 1
        response: dict[str, Any] = {"StatusCode": 200, "Payload": io.BytesIO(b"null")}
        if self.errors:
            self.errors -= 1
            response["FunctionError"] = "Unhandled"
            response["Payload"] = io.BytesIO(json.dumps({"errorType": "E"}).encode())
        return response


def invoker(function: StandInFunction) -> AsyncInvoker:
    return AsyncInvoker(lambda_client=cast(Any, function), sqs=cast(Any, None))


def test_a_throttled_event_is_tried_again_until_it_runs() -> None:
    function = StandInFunction(throttles=5)
    assert invoker(function).invoke(FUNCTION, {"detail": {}}) is True
    assert (function.throttles, function.invoked) == (0, 1)


def test_throttles_spend_no_retries_function_errors_do() -> None:
    # Two function errors use the two retries; the throttles before them used none.
    function = StandInFunction(throttles=4, errors=2)
    assert invoker(function).invoke(FUNCTION, {"detail": {}}) is True
    assert function.invoked == 3
