"""EventBridge: event buses, their archives, rules with their targets, and the connections
and API destinations of webhooks (moto delivers what is put on a bus to its rules' SQS,
log group and archive targets; status changes and schedules are delivered by
``richdoc_tools.local.runtime.events``, API destinations by
``richdoc_tools.local.runtime.webhooks``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from richdoc_tools.local.cloudformation.provisioners.registry import provisions
from richdoc_tools.local.cloudformation.template import TemplateError

if TYPE_CHECKING:
    from types_boto3_events.type_defs import TargetTypeDef

    from richdoc_tools.local.cloudformation.deploy import Deployment

_TARGET_OPTIONS: tuple[Literal["Input", "DeadLetterConfig", "RetryPolicy", "RoleArn"], ...] = (
    "Input",
    "DeadLetterConfig",
    "RetryPolicy",
    "RoleArn",
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
        if "RetryPolicy" in t:  # numbers, though a parameter's Ref resolves to a string
            target["RetryPolicy"] = {k: int(v) for k, v in t["RetryPolicy"].items()}  # type: ignore[typeddict-item]
        targets.append(target)
    if targets:
        events.put_targets(Rule=name, EventBusName=bus, Targets=targets)
    deployment.created(logical_id, name, Arn=rule["RuleArn"])


# The lengths CreateConnection accepts for a key, a user name and a password (API
# reference, CreateConnectionApiKeyAuthRequestParameters and ...BasicAuth...).
_SECRET_LENGTH = range(1, 513)


@provisions(
    "AWS::Events::Connection",
    consumes=("Name", "AuthorizationType", "AuthParameters"),
    inert=("Description",),
)
def _connection(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    # EventBridge keeps the authorization in a Secrets Manager secret of its own (moto
    # too: the connection's SecretArn); runtime.webhooks.WebhookDelivery reads it from there.
    name = props.get("Name") or deployment.physical_name(logical_id, 64)
    parameters = props["AuthParameters"]
    for values in parameters.values():
        for member, value in values.items():
            if len(str(value)) not in _SECRET_LENGTH:
                raise TemplateError(
                    f"{logical_id}: AuthParameters {member} must be 1 to 512 characters "
                    "(CreateConnection refuses it on AWS)"
                )
    connection = deployment.client("events").create_connection(
        Name=name,
        Description=props.get("Description", ""),
        AuthorizationType=props["AuthorizationType"],
        AuthParameters=parameters,
    )
    arn = connection["ConnectionArn"]
    secret = deployment.client("events").describe_connection(Name=name)["SecretArn"]
    deployment.created(logical_id, name, Arn=arn, SecretArn=secret)


def endpoint_problem(url: str) -> str | None:
    """Why an API destination cannot have this endpoint; None when it can (EventBridge
    calls HTTPS endpoints only). The webhook delivery asks again before each request."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    return "an API destination's endpoint is an https:// URL (EventBridge calls nothing else)"


@provisions(
    "AWS::Events::ApiDestination",
    consumes=(
        "Name",
        "ConnectionArn",
        "InvocationEndpoint",
        "HttpMethod",
        "InvocationRateLimitPerSecond",
    ),
    inert=("Description",),
)
def _api_destination(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    endpoint = props["InvocationEndpoint"]
    problem = endpoint_problem(endpoint)
    if problem is not None:
        raise TemplateError(f"{logical_id}: InvocationEndpoint {endpoint!r}: {problem}")
    name = props.get("Name") or deployment.physical_name(logical_id, 64)
    destination = deployment.client("events").create_api_destination(
        Name=name,
        Description=props.get("Description", ""),
        ConnectionArn=props["ConnectionArn"],
        InvocationEndpoint=endpoint,
        HttpMethod=props["HttpMethod"],
        InvocationRateLimitPerSecond=int(props.get("InvocationRateLimitPerSecond", 300)),
    )
    deployment.created(logical_id, name, Arn=destination["ApiDestinationArn"])
