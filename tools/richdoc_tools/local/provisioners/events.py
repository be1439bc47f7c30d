"""EventBridge: rules with their targets (delivered by ``richdoc_tools.local.events``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from richdoc_tools.local.provisioners.registry import provisions

if TYPE_CHECKING:
    from types_boto3_events.type_defs import TargetTypeDef

    from richdoc_tools.local.deploy import Deployment

_TARGET_OPTIONS: tuple[Literal["Input", "DeadLetterConfig", "RetryPolicy"], ...] = (
    "Input",
    "DeadLetterConfig",
    "RetryPolicy",
)


@provisions(
    "AWS::Events::Rule",
    consumes=("Name", "EventPattern", "ScheduleExpression", "State", "Targets"),
    inert=("Description",),
)
def _events_rule(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    # moto stores the rules; richdoc_tools.local.events delivers to their targets (status
    # changes, schedules) the way EventBridge would.
    events = deployment.client("events")
    name = props.get("Name") or deployment.physical_name(logical_id, 64)
    trigger = (
        {"ScheduleExpression": props["ScheduleExpression"]}
        if "ScheduleExpression" in props
        else {"EventPattern": json.dumps(props["EventPattern"])}
    )
    rule = events.put_rule(Name=name, State=props.get("State", "ENABLED"), **trigger)
    targets: list[TargetTypeDef] = []
    for t in props.get("Targets", []):
        target: TargetTypeDef = {"Id": t["Id"], "Arn": t["Arn"]}
        for option in _TARGET_OPTIONS:
            if option in t:
                target[option] = t[option]
        targets.append(target)
    if targets:
        events.put_targets(Rule=name, Targets=targets)
    deployment.created(logical_id, name, Arn=rule["RuleArn"])
