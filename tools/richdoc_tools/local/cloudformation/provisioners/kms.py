"""KMS: the customer managed key of the alarm topic."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    deletes,
    provisions,
    updates,
)

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment


@provisions(
    "AWS::KMS::Key",
    consumes=("Description", "KeyPolicy", "KeyUsage", "EnableKeyRotation"),
)
def _kms_key(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    kms = deployment.client("kms")
    key = kms.create_key(
        Description=props.get("Description", ""),
        Policy=json.dumps(props["KeyPolicy"]),
        KeyUsage=props.get("KeyUsage", "ENCRYPT_DECRYPT"),
    )["KeyMetadata"]
    if props.get("EnableKeyRotation"):
        kms.enable_key_rotation(KeyId=key["KeyId"])
    deployment.created(logical_id, key["KeyId"], Arn=key["Arn"], KeyId=key["KeyId"])


@updates("AWS::KMS::Key", replaces=("KeyUsage",))
def _update_kms_key(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    kms, key = deployment.client("kms"), deployment.deployed.refs[logical_id]
    kms.put_key_policy(KeyId=key, PolicyName="default", Policy=json.dumps(new["KeyPolicy"]))
    kms.update_key_description(KeyId=key, Description=new.get("Description", ""))
    if new.get("EnableKeyRotation"):
        kms.enable_key_rotation(KeyId=key)
    else:
        kms.disable_key_rotation(KeyId=key)


@deletes("AWS::KMS::Key")
def _delete_kms_key(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    # As CloudFormation: scheduled for deletion after its default PendingWindowInDays.
    deployment.client("kms").schedule_key_deletion(KeyId=resource.ref, PendingWindowInDays=30)
