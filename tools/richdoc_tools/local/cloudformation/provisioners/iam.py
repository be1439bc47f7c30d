"""IAM: roles with their inline and managed policies, stand-alone policies, and managed
policies of their own (the operators')."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    deletes,
    provisions,
    tags,
    updates,
)

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


@updates("AWS::IAM::Role", replaces=("RoleName",), name_property="RoleName")
def _update_role(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    """Its trust policy, inline policies and managed policies in place: the role (and the
    sessions assumed with it) stays."""
    iam, name = deployment.client("iam"), deployment.deployed.refs[logical_id]
    if old["AssumeRolePolicyDocument"] != new["AssumeRolePolicyDocument"]:
        iam.update_assume_role_policy(
            RoleName=name, PolicyDocument=json.dumps(new["AssumeRolePolicyDocument"])
        )
    before = {p["PolicyName"]: p["PolicyDocument"] for p in old.get("Policies", [])}
    after = {p["PolicyName"]: p["PolicyDocument"] for p in new.get("Policies", [])}
    for policy in before.keys() - after.keys():
        iam.delete_role_policy(RoleName=name, PolicyName=policy)
    for policy, document in after.items():
        if before.get(policy) != document:
            iam.put_role_policy(
                RoleName=name, PolicyName=policy, PolicyDocument=_versioned(document)
            )
    managed_before = set(old.get("ManagedPolicyArns", []))
    managed_after = set(new.get("ManagedPolicyArns", []))
    for arn in managed_before - managed_after:
        iam.detach_role_policy(RoleName=name, PolicyArn=arn)
    for arn in managed_after - managed_before:
        iam.attach_role_policy(RoleName=name, PolicyArn=arn)


@deletes("AWS::IAM::Role")
def _delete_role(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    iam, name = deployment.client("iam"), resource.ref
    for attached in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]:
        iam.detach_role_policy(RoleName=name, PolicyArn=attached["PolicyArn"])
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        iam.delete_role_policy(RoleName=name, PolicyName=policy)
    iam.delete_role(RoleName=name)


@updates("AWS::IAM::Policy")
def _update_policy(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    iam = deployment.client("iam")
    for role in old.get("Roles", []):
        if role not in new.get("Roles", []) or old["PolicyName"] != new["PolicyName"]:
            iam.delete_role_policy(RoleName=role, PolicyName=old["PolicyName"])
    _iam_policy(deployment, logical_id, new)


@deletes("AWS::IAM::Policy")
def _delete_policy(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    for role in props.get("Roles", []):
        deployment.client("iam").delete_role_policy(RoleName=role, PolicyName=props["PolicyName"])


# IAM keeps at most five versions of a managed policy.
MAX_POLICY_VERSIONS = 5


@updates(
    "AWS::IAM::ManagedPolicy",
    replaces=("ManagedPolicyName", "Description"),
    name_property="ManagedPolicyName",
)
def _update_managed_policy(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    """A new default version of the document (the oldest other one deleted when five are
    kept, as CloudFormation does)."""
    iam, arn = deployment.client("iam"), deployment.deployed.refs[logical_id]
    versions = iam.list_policy_versions(PolicyArn=arn)["Versions"]
    if len(versions) >= MAX_POLICY_VERSIONS:
        oldest = min(
            (v for v in versions if not v["IsDefaultVersion"]), key=lambda v: v["CreateDate"]
        )
        iam.delete_policy_version(PolicyArn=arn, VersionId=oldest["VersionId"])
    iam.create_policy_version(
        PolicyArn=arn, PolicyDocument=_versioned(new["PolicyDocument"]), SetAsDefault=True
    )


@deletes("AWS::IAM::ManagedPolicy")
def _delete_managed_policy(
    deployment: Deployment, resource: Physical, props: dict[str, Any]
) -> None:
    iam, arn = deployment.client("iam"), resource.ref
    entities = iam.list_entities_for_policy(PolicyArn=arn)
    for role in entities.get("PolicyRoles", []):
        iam.detach_role_policy(RoleName=role["RoleName"], PolicyArn=arn)
    for version in iam.list_policy_versions(PolicyArn=arn)["Versions"]:
        if not version["IsDefaultVersion"]:
            iam.delete_policy_version(PolicyArn=arn, VersionId=version["VersionId"])
    iam.delete_policy(PolicyArn=arn)
