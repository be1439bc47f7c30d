"""Canary: moto's retrier sleeps through its module's ``time`` (patches.retry_sleep)."""

from __future__ import annotations

import importlib
import inspect

from richdoc_tools.local.patches import retry_sleep


def test_retry_sleep_patch_point_still_sleeps_through_the_module_time() -> None:
    module_name, _, attribute = retry_sleep.TARGET.rpartition(".")
    module = importlib.import_module(module_name)
    assert attribute == "time"
    assert "time.sleep(interval_seconds)" in inspect.getsource(module.RetrierDecl._eval_body)
