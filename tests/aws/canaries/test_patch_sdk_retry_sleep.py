"""Canary: botocore sleeps between its retries through the stand-in the stack scales
(patches.sdk_retry_sleep): the number and order of retries are botocore's, only the
waiting is shorter."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import boto3
import botocore.endpoint
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import sdk_retry_sleep
from richdoc_tools.local.patches.retry_sleep import ScaledSleep


class SlowDown(BaseHTTPRequestHandler):
    """S3 answering every request with its throttle (503 SlowDown)."""

    def do_GET(self) -> None:
        body = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"
        self.send_response(503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def throttling_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowDown)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def test_with_the_patch_botocore_s_retries_sleep_through_the_scaled_stand_in(
    throttling_endpoint: str,
) -> None:
    s3 = boto3.client(
        "s3",
        endpoint_url=throttling_endpoint,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"mode": "standard", "max_attempts": 3}),
    )
    slept: list[float] = []
    with contextlib.ExitStack() as exit_stack:
        sdk_retry_sleep.install(exit_stack, 0.0)
        stand_in = vars(botocore.endpoint)["time"]
        assert isinstance(stand_in, ScaledSleep)
        assert stand_in.monotonic() > 0  # the rest of the module is the real one
        exit_stack.enter_context(mock.patch.object(stand_in, "sleep", slept.append))
        with pytest.raises(ClientError) as throttled:
            s3.get_object(Bucket="b", Key="k")
    assert throttled.value.response["Error"]["Code"] == "SlowDown"
    retries = throttled.value.response["ResponseMetadata"]["RetryAttempts"]
    assert retries > 0
    assert len(slept) == retries  # one sleep before each retry, each through the stand-in
    assert vars(botocore.endpoint)["time"] is not stand_in  # undone with the stack
