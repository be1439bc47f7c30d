"""botocore's retry back-off, scaled like the state machine's Retry intervals.

botocore retries throttles and 5xx answers itself, sleeping between attempts in
``botocore.endpoint`` (with exponential back-off and jitter, up to many seconds). Under
injected faults that is most of a run's time: the stack scales those sleeps by its
``retry_delay_scale`` (``patches.retry_sleep`` does the same for Step Functions), so the
number and order of retries are botocore's and only the waiting is shorter.
"""

from __future__ import annotations

import contextlib

from richdoc_tools.local.patch_targets import replace
from richdoc_tools.local.patches.retry_sleep import ScaledSleep

TARGET = "botocore.endpoint.time"
PATCHED = (TARGET,)


def install(exit_stack: contextlib.ExitStack, scale: float) -> None:
    replace(exit_stack, TARGET, ScaledSleep(scale))
