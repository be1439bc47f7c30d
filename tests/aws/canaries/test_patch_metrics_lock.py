"""Canary: Powertools' EMF provider still has the methods that touch its one metric set
(patches.metrics_lock)."""

from __future__ import annotations

import importlib

from richdoc_tools.local.patches import metrics_lock


def test_metrics_provider_patch_point_has_the_shared_metric_set_methods() -> None:
    module_name, _, class_name = metrics_lock.TARGET.rpartition(".")
    provider = getattr(importlib.import_module(module_name), class_name)
    for method in metrics_lock.METHODS:
        assert callable(getattr(provider, method)), method
