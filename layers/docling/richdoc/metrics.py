"""The metrics richdoc reports: every one in the CloudWatch namespace ``richdoc`` (the
alarms and the dashboard read it there), written as CloudWatch embedded metric format by
Powertools.

A handler's metrics with its service dimension go through a Powertools ``Metrics`` made
with ``NAMESPACE`` and flushed when the invocation ends; ``emit`` writes one metric with
exactly the dimensions given, at once (an alarm matches a metric by all its dimensions).
"""

from __future__ import annotations

from aws_lambda_powertools.metrics import MetricUnit, single_metric

NAMESPACE = "richdoc"


def emit(name: str, value: float, unit: MetricUnit = MetricUnit.Count, **dimensions: str) -> None:
    """One metric with exactly these dimensions (no service dimension), flushed now."""
    with single_metric(name=name, unit=unit, value=value, namespace=NAMESPACE) as metric:
        for dimension, dimension_value in dimensions.items():
            metric.add_dimension(name=dimension, value=dimension_value)
