"""EventBridge: event buses, their archives, rules with their targets, and the connections
and API destinations of webhooks (moto delivers what is put on a bus to its rules' SQS,
log group and archive targets; status changes and schedules are delivered by
``richdoc_tools.local.runtime.events``, API destinations by
``richdoc_tools.local.runtime.webhooks``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    deletes,
    provisions,
    replaced_on_any_change,
    updates,
)
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


replaced_on_any_change("AWS::Events::EventBus", name_property="Name")


@deletes("AWS::Events::EventBus")
def _delete_event_bus(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("events").delete_event_bus(Name=resource.ref)


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


@updates("AWS::Events::Archive", replaces=("ArchiveName", "SourceArn"), name_property="ArchiveName")
def _update_archive(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    kwargs: dict[str, Any] = {
        "ArchiveName": deployment.deployed.refs[logical_id],
        "Description": new.get("Description", ""),
    }
    if "EventPattern" in new:
        kwargs["EventPattern"] = json.dumps(new["EventPattern"])
    if "RetentionDays" in new:
        kwargs["RetentionDays"] = int(new["RetentionDays"])
    deployment.client("events").update_archive(**kwargs)


@deletes("AWS::Events::Archive")
def _delete_archive(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("events").delete_archive(ArchiveName=resource.ref)


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


@updates("AWS::Events::Rule", replaces=("Name", "EventBusName"), name_property="Name")
def _update_rule(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    """PutRule and PutTargets again (both replace what they name); the targets the
    template no longer has removed."""
    gone = {t["Id"] for t in old.get("Targets", [])} - {t["Id"] for t in new.get("Targets", [])}
    if gone:
        deployment.client("events").remove_targets(
            Rule=deployment.deployed.refs[logical_id],
            EventBusName=old.get("EventBusName", "default"),
            Ids=sorted(gone),
        )
    _events_rule(deployment, logical_id, {**new, "Name": deployment.deployed.refs[logical_id]})


@deletes("AWS::Events::Rule")
def _delete_rule(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    events, bus = deployment.client("events"), props.get("EventBusName", "default")
    ids = [t["Id"] for t in props.get("Targets", [])]
    if ids:
        events.remove_targets(Rule=resource.ref, EventBusName=bus, Ids=ids)
    events.delete_rule(Name=resource.ref, EventBusName=bus)


# The lengths CreateConnection accepts for a key, a user name and a password (API
# reference, CreateConnectionApiKeyAuthRequestParameters and ...BasicAuth...).
_SECRET_LENGTH = range(1, 513)


def _check_secrets(logical_id: str, parameters: dict[str, Any]) -> None:
    for values in parameters.values():
        for member, value in values.items():
            if len(str(value)) not in _SECRET_LENGTH:
                raise TemplateError(
                    f"{logical_id}: AuthParameters {member} must be 1 to 512 characters "
                    "(CreateConnection refuses it on AWS)"
                )


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
    _check_secrets(logical_id, parameters)
    connection = deployment.client("events").create_connection(
        Name=name,
        Description=props.get("Description", ""),
        AuthorizationType=props["AuthorizationType"],
        AuthParameters=parameters,
    )
    arn = connection["ConnectionArn"]
    secret = deployment.client("events").describe_connection(Name=name)["SecretArn"]
    deployment.created(logical_id, name, Arn=arn, SecretArn=secret)


@updates("AWS::Events::Connection", replaces=("Name",), name_property="Name")
def _update_connection(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    _check_secrets(logical_id, new["AuthParameters"])
    deployment.client("events").update_connection(
        Name=deployment.deployed.refs[logical_id],
        Description=new.get("Description", ""),
        AuthorizationType=new["AuthorizationType"],
        AuthParameters=new["AuthParameters"],
    )


@deletes("AWS::Events::Connection")
def _delete_connection(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("events").delete_connection(Name=resource.ref)


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


@updates("AWS::Events::ApiDestination", replaces=("Name",), name_property="Name")
def _update_api_destination(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    endpoint = new["InvocationEndpoint"]
    problem = endpoint_problem(endpoint)
    if problem is not None:
        raise TemplateError(f"{logical_id}: InvocationEndpoint {endpoint!r}: {problem}")
    deployment.client("events").update_api_destination(
        Name=deployment.deployed.refs[logical_id],
        Description=new.get("Description", ""),
        ConnectionArn=new["ConnectionArn"],
        InvocationEndpoint=endpoint,
        HttpMethod=new["HttpMethod"],
        InvocationRateLimitPerSecond=int(new.get("InvocationRateLimitPerSecond", 300)),
    )


@deletes("AWS::Events::ApiDestination")
def _delete_api_destination(
    deployment: Deployment, resource: Physical, props: dict[str, Any]
) -> None:
    deployment.client("events").delete_api_destination(Name=resource.ref)
