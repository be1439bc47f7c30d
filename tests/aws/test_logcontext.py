"""Per-invocation log keys: concurrent invocations in one process never share a
correlation id, and a warm invocation never carries the previous one's keys."""

from __future__ import annotations

import io
import json
import threading
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger

from richdoc.logcontext import log_invocation


@dataclass
class Context:
    aws_request_id: str
    function_name: str = "fn"
    memory_limit_in_mb: int = 128
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:fn"


def _logger(stream: io.StringIO) -> Logger:
    return Logger(service=f"logcontext-test-{id(stream)}", stream=stream)


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_concurrent_invocations_keep_their_own_correlation_id_and_keys() -> None:
    stream = io.StringIO()
    logger = _logger(stream)
    both_started = threading.Barrier(2)

    @log_invocation(logger, correlation_id_path="job_id")
    def handler(event: dict[str, Any], context: Context) -> None:
        logger.thread_safe_append_keys(run=event["run"])
        # ``extra`` belongs to the one call: what the line must say, whatever the keys say.
        logger.info("started", extra={"invocation_of": event["job_id"]})
        both_started.wait(timeout=30)  # the other invocation has set its keys by now
        logger.info("finished", extra={"invocation_of": event["job_id"]})

    threads = [
        threading.Thread(
            target=handler, args=({"job_id": job, "run": run}, Context(f"request-{job}"))
        )
        for job, run in (("job-a", 1), ("job-b", 2))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    lines = _lines(stream)
    assert len(lines) == 4
    for line in lines:
        job = line["invocation_of"]
        assert line["correlation_id"] == job
        assert line["function_request_id"] == f"request-{job}"
        assert line["run"] == {"job-a": 1, "job-b": 2}[job]
    assert {line["correlation_id"] for line in lines} == {"job-a", "job-b"}


def test_a_warm_invocation_starts_without_the_previous_invocations_keys() -> None:
    stream = io.StringIO()
    logger = _logger(stream)

    @log_invocation(logger, correlation_id_path="job_id")
    def handler(event: dict[str, Any], context: Context) -> None:
        if "extra" in event:
            logger.thread_safe_append_keys(extra=event["extra"])
        logger.info("handled")

    handler({"job_id": "job-1", "extra": "only-here"}, Context("r1"))
    handler({"job_id": "job-2"}, Context("r2"))
    logger.info("between invocations")

    first, second, between = _lines(stream)
    assert (first["correlation_id"], first["extra"], first["cold_start"]) == (
        "job-1",
        "only-here",
        True,
    )
    assert (second["correlation_id"], second["cold_start"]) == ("job-2", False)
    assert "extra" not in second
    assert "correlation_id" not in between and "function_request_id" not in between
