"""IAM: roles with their inline and managed policies, stand-alone policies, and managed
policies of their own (the operators')."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import provisions, tags

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment


def _versioned(document: Mapping[str, Any]) -> str:
    # IAM reads a document without Version as 2008-10-17 (SAM's policy templates omit
    # it); moto rejects such documents, so the emulation states the version.
    return json.dumps({"Version": "2012-10-17", **document})


@provisions(
    "AWS::IAM::Role",
    consumes=("RoleName", "AssumeRolePolicyDocument", "Tags", "Policies", "ManagedPolicyArns"),
    inert=("Description",),
)
def _iam_role(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    iam = deployment.client("iam")
    name = props.get("RoleName") or deployment.physical_name(logical_id, 64)
    role = iam.create_role(
        RoleName=name,
        AssumeRolePolicyDocument=json.dumps(props["AssumeRolePolicyDocument"]),
        Tags=tags(props),
    )["Role"]
    for policy in props.get("Policies", []):
        iam.put_role_policy(
            RoleName=name,
            PolicyName=policy["PolicyName"],
            PolicyDocument=_versioned(policy["PolicyDocument"]),
        )
    for arn in props.get("ManagedPolicyArns", []):
        iam.attach_role_policy(RoleName=name, PolicyArn=arn)
    deployment.created(logical_id, name, Arn=role["Arn"], RoleId=role["RoleId"])


@provisions("AWS::IAM::Policy", consumes=("PolicyDocument", "PolicyName", "Roles"))
def _iam_policy(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    for role in props.get("Roles", []):
        deployment.client("iam").put_role_policy(
            RoleName=role,
            PolicyName=props["PolicyName"],
            PolicyDocument=_versioned(props["PolicyDocument"]),
        )
    deployment.created(logical_id, logical_id)


@provisions(
    "AWS::IAM::ManagedPolicy",
    consumes=("PolicyDocument", "ManagedPolicyName"),
    inert=("Description",),
)
def _iam_managed_policy(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("ManagedPolicyName") or deployment.physical_name(logical_id, 128)
    arn = deployment.client("iam").create_policy(
        PolicyName=name, PolicyDocument=_versioned(props["PolicyDocument"])
    )["Policy"]["Arn"]
    deployment.created(logical_id, arn, PolicyArn=arn)
