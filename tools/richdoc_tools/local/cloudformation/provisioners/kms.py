"""KMS: the customer managed key of the alarm topic."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import provisions

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
