"""CloudWatch Logs: log groups and their retention; resource policies."""

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


@provisions("AWS::Logs::LogGroup", consumes=("LogGroupName", "RetentionInDays"))
def _log_group(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    logs = deployment.client("logs")
    name = props.get("LogGroupName") or deployment.physical_name(logical_id, 512)
    logs.create_log_group(logGroupName=name)
    if "RetentionInDays" in props:
        logs.put_retention_policy(logGroupName=name, retentionInDays=int(props["RetentionInDays"]))
    deployment.created(logical_id, name, Arn=deployment.arn("logs", f"log-group:{name}:*"))


@provisions(
    "AWS::Logs::ResourcePolicy",
    consumes=("PolicyName", "PolicyDocument"),
    not_emulated={"PolicyDocument": "resource-based policies are not evaluated locally"},
)
def _resource_policy(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    deployment.client("logs").put_resource_policy(
        policyName=props["PolicyName"], policyDocument=props["PolicyDocument"]
    )
    deployment.created(logical_id, props["PolicyName"])


@updates("AWS::Logs::LogGroup", replaces=("LogGroupName",), name_property="LogGroupName")
def _update_log_group(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    logs, name = deployment.client("logs"), deployment.deployed.refs[logical_id]
    if "RetentionInDays" in new:
        logs.put_retention_policy(logGroupName=name, retentionInDays=int(new["RetentionInDays"]))
    else:
        logs.delete_retention_policy(logGroupName=name)


@deletes("AWS::Logs::LogGroup")
def _delete_log_group(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("logs").delete_log_group(logGroupName=resource.ref)


@updates("AWS::Logs::ResourcePolicy", replaces=("PolicyName",), name_property="PolicyName")
def _update_resource_policy(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    _resource_policy(deployment, logical_id, new)  # Put replaces the policy of that name


@deletes("AWS::Logs::ResourcePolicy")
def _delete_resource_policy(
    deployment: Deployment, resource: Physical, props: dict[str, Any]
) -> None:
    deployment.client("logs").delete_resource_policy(policyName=resource.ref)
