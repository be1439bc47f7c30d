"""Powertools' metric set, one invocation at a time.

Powertools keeps one metric set per process, flushed by whichever invocation ends first;
concurrent handlers (threads here, processes on AWS) failed with "Must contain at least
one metric". The provider's methods that touch the set run under one lock.
"""

from __future__ import annotations

import contextlib
import threading

from richdoc_tools.local.patch_targets import locked, original, replace

TARGET = (
    "aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch.AmazonCloudWatchEMFProvider"
)
METHODS = (
    "add_metric",
    "add_dimension",
    "add_metadata",
    "serialize_metric_set",
    "flush_metrics",
    "clear_metrics",
)
PATCHED = tuple(f"{TARGET}.{method}" for method in METHODS)


def install(exit_stack: contextlib.ExitStack) -> None:
    lock = threading.RLock()
    for target in PATCHED:
        replace(exit_stack, target, locked(original(target), lock))
