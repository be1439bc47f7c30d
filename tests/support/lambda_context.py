"""The context object Lambda's runtime passes to a handler, with what richdoc's handlers
and Powertools read from it, for calling handlers directly in tests."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FakeLambdaContext:
    function_name: str = "richdoc-parse-tier1"
    memory_limit_in_mb: int = 3008
    aws_request_id: str = "request-1"
    remaining_ms: int = 900_000  # a fresh invocation of a 900 s function

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms
