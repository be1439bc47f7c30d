"""Canary: botocore sleeps between its retries through botocore.endpoint's ``time``,
which the stack scales (patches.sdk_retry_sleep)."""

from __future__ import annotations

import contextlib
import inspect

import botocore.endpoint
from richdoc_tools.local.patches import sdk_retry_sleep
from richdoc_tools.local.patches.retry_sleep import ScaledSleep


def test_botocores_retry_sleep_is_scaled() -> None:
    source = inspect.getsource(vars(botocore.endpoint.Endpoint)["_needs_retry"])
    assert "time.sleep(handler_response)" in source
    with contextlib.ExitStack() as exit_stack:
        sdk_retry_sleep.install(exit_stack, 0.0)
        stand_in = vars(botocore.endpoint)["time"]
        assert isinstance(stand_in, ScaledSleep)
        stand_in.sleep(3600)  # returns at once
        assert stand_in.monotonic() > 0  # the rest of the module is the real one
    assert vars(botocore.endpoint)["time"] is not stand_in
