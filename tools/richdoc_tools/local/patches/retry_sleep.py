"""Retry intervals, scaled.

moto's interpreter really sleeps a Retry's ``IntervalSeconds`` (with backoff) through the
``time`` module of its retrier; the stack replaces that module's ``time`` with one whose
``sleep`` is scaled (``StackSettings(retry_delay_scale=...)``: 0.01 by default, 0 in tests),
so retry-heavy runs take a fraction of a second instead of minutes.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from richdoc_tools.local.patch_targets import replace

TARGET = "moto.stepfunctions.parser.asl.component.common.retry.retrier_decl.time"
PATCHED = (TARGET,)


class ScaledSleep:
    """Stands in for the ``time`` module of a module that sleeps between retries: its
    ``sleep`` scaled, the rest the real module's."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds * self.scale)

    def __getattr__(self, name: str) -> Any:  # any of the time module's attributes
        return getattr(time, name)


def install(exit_stack: contextlib.ExitStack, scale: float) -> None:
    replace(exit_stack, TARGET, ScaledSleep(scale))
