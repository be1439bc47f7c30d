"""CloudWatch: alarms (created, never evaluated: there are no metrics locally)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    deletes,
    provisions,
    updates,
)

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment

_ALARM_PROPERTIES = (
    "AlarmDescription",
    "Namespace",
    "MetricName",
    "Dimensions",
    "Statistic",
    "Period",
    "EvaluationPeriods",
    "Threshold",
    "DatapointsToAlarm",
    "ComparisonOperator",
    "TreatMissingData",
    "AlarmActions",
    "Metrics",
)


@provisions("AWS::CloudWatch::Alarm", consumes=("AlarmName", *_ALARM_PROPERTIES))
def _alarm(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("AlarmName") or deployment.physical_name(logical_id, 255)
    kwargs = {k: props[k] for k in _ALARM_PROPERTIES if k in props}
    for numeric in ("Period", "EvaluationPeriods", "DatapointsToAlarm"):
        if numeric in kwargs:
            kwargs[numeric] = int(kwargs[numeric])
    if "Threshold" in kwargs:
        kwargs["Threshold"] = float(kwargs["Threshold"])
    deployment.client("cloudwatch").put_metric_alarm(AlarmName=name, **kwargs)
    deployment.created(logical_id, name, Arn=deployment.arn("cloudwatch", f"alarm:{name}"))


@updates("AWS::CloudWatch::Alarm", replaces=("AlarmName",), name_property="AlarmName")
def _update_alarm(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    # PutMetricAlarm replaces the whole alarm of that name.
    _alarm(deployment, logical_id, {**new, "AlarmName": deployment.deployed.refs[logical_id]})


@deletes("AWS::CloudWatch::Alarm")
def _delete_alarm(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("cloudwatch").delete_alarms(AlarmNames=[resource.ref])
