"""EventBridge: event buses, their archives, and rules with their targets (moto delivers
what is put on a bus to its rules' SQS, log group and archive targets; status changes and
schedules are delivered by ``richdoc_tools.local.runtime.events``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from richdoc_tools.local.cloudformation.provisioners.registry import provisions

if TYPE_CHECKING:
    from types_boto3_events.type_defs import TargetTypeDef

    from richdoc_tools.local.cloudformation.deploy import Deployment

_TARGET_OPTIONS: tuple[Literal["Input", "DeadLetterConfig", "RetryPolicy"], ...] = (
    "Input",
    "DeadLetterConfig",
    "RetryPolicy",
)


@provisions("AWS::Events::EventBus", consumes=("Name",))
def _event_bus(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("Name") or deployment.physical_name(logical_id, 256)
    bus = deployment.client("events").create_event_bus(Name=name)
    deployment.created(logical_id, name, Arn=bus["EventBusArn"], Name=name)


@provisions(
    "AWS::Events::Archive",
    consumes=("ArchiveName", "SourceArn", "EventPattern", "RetentionDays"),
    inert=("Description",),
)
def _archive(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("ArchiveName") or deployment.physical_name(logical_id, 48)
    kwargs: dict[str, Any] = {"ArchiveName": name, "EventSourceArn": props["SourceArn"]}
    if "EventPattern" in props:
        kwargs["EventPattern"] = json.dumps(props["EventPattern"])
    if "RetentionDays" in props:
        kwargs["RetentionDays"] = int(props["RetentionDays"])
    archive = deployment.client("events").create_archive(**kwargs)
    deployment.created(logical_id, name, Arn=archive["ArchiveArn"])


@provisions(
    "AWS::Events::Rule",
    consumes=("Name", "EventBusName", "EventPattern", "ScheduleExpression", "State", "Targets"),
    inert=("Description",),
)
def _events_rule(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    # moto stores the rules; richdoc_tools.local.runtime.events delivers to their targets (status
    # changes, schedules) the way EventBridge would.
    events = deployment.client("events")
    name = props.get("Name") or deployment.physical_name(logical_id, 64)
    trigger = (
        {"ScheduleExpression": props["ScheduleExpression"]}
        if "ScheduleExpression" in props
        else {"EventPattern": json.dumps(props["EventPattern"])}
    )
    bus = props.get("EventBusName", "default")
    rule = events.put_rule(
        Name=name, EventBusName=bus, State=props.get("State", "ENABLED"), **trigger
    )
    targets: list[TargetTypeDef] = []
    for t in props.get("Targets", []):
        target: TargetTypeDef = {"Id": t["Id"], "Arn": t["Arn"]}
        for option in _TARGET_OPTIONS:
            if option in t:
                target[option] = t[option]
        targets.append(target)
    if targets:
        events.put_targets(Rule=name, EventBusName=bus, Targets=targets)
    deployment.created(logical_id, name, Arn=rule["RuleArn"])
