"""S3: buckets (versioning, encryption, public access, notifications, lifecycle rules) and
bucket policies. The lifecycle rules are applied on the stack's clock
(``richdoc_tools.local.runtime.s3_lifecycle``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from richdoc_tools.local.cloudformation.provisioners.registry import (
    NotEmulated,
    Physical,
    deletes,
    provisions,
    updates,
)
from richdoc_tools.local.cloudformation.template import TemplateError

if TYPE_CHECKING:
    from types_boto3_s3.type_defs import (
        QueueConfigurationTypeDef,
        ServerSideEncryptionConfigurationTypeDef,
    )

    from richdoc_tools.local.cloudformation.deploy import Deployment


@provisions(
    "AWS::S3::Bucket",
    consumes=(
        "BucketName",
        "VersioningConfiguration",
        "BucketEncryption",
        "PublicAccessBlockConfiguration",
        "OwnershipControls",
        "NotificationConfiguration",
        "LifecycleConfiguration",
    ),
)
def _s3_bucket(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    s3 = deployment.client("s3")
    name = props.get("BucketName") or deployment.physical_name(logical_id, 63, lower=True)
    s3.create_bucket(Bucket=name)
    _configure(deployment, logical_id, name, {}, props)
    deployment.created(
        logical_id, name, Arn=f"arn:aws:s3:::{name}", DomainName=f"{name}.s3.amazonaws.com"
    )


def _configure(
    deployment: Deployment,
    logical_id: str,
    name: str,
    old: Mapping[str, Any],
    props: Mapping[str, Any],
) -> None:
    """Each part of the bucket's configuration that ``props`` changes from ``old``."""
    s3 = deployment.client("s3")

    def changed(key: str) -> bool:
        return old.get(key) != props.get(key)

    if changed("VersioningConfiguration") and "VersioningConfiguration" in props:
        s3.put_bucket_versioning(
            Bucket=name, VersioningConfiguration=props["VersioningConfiguration"]
        )
    if changed("BucketEncryption") and "BucketEncryption" in props:
        encryption: ServerSideEncryptionConfigurationTypeDef = {
            "Rules": [
                {"ApplyServerSideEncryptionByDefault": rule["ServerSideEncryptionByDefault"]}
                for rule in props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
            ]
        }
        s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration=encryption)
    if changed("PublicAccessBlockConfiguration"):
        if "PublicAccessBlockConfiguration" in props:
            s3.put_public_access_block(
                Bucket=name,
                PublicAccessBlockConfiguration=props["PublicAccessBlockConfiguration"],
            )
        else:
            s3.delete_public_access_block(Bucket=name)
    if changed("OwnershipControls") and "OwnershipControls" in props:
        s3.put_bucket_ownership_controls(Bucket=name, OwnershipControls=props["OwnershipControls"])
    if changed("NotificationConfiguration"):
        notifications = props.get("NotificationConfiguration", {})
        queues: list[QueueConfigurationTypeDef] = []
        for q in notifications.get("QueueConfigurations", []):
            queue: QueueConfigurationTypeDef = {"QueueArn": q["Queue"], "Events": [q["Event"]]}
            if "Filter" in q:
                queue["Filter"] = q["Filter"]
            queues.append(queue)
        unsupported = set(notifications) - {"QueueConfigurations"}
        if unsupported:
            raise TemplateError(f"{logical_id}: notifications {sorted(unsupported)} not emulated")
        s3.put_bucket_notification_configuration(
            Bucket=name, NotificationConfiguration={"QueueConfigurations": queues}
        )
    if changed("LifecycleConfiguration"):
        if "LifecycleConfiguration" in props:
            rules = [
                _lifecycle_rule(logical_id, r) for r in props["LifecycleConfiguration"]["Rules"]
            ]
            s3.put_bucket_lifecycle_configuration(
                Bucket=name, LifecycleConfiguration={"Rules": cast(Any, rules)}
            )
        else:
            s3.delete_bucket_lifecycle(Bucket=name)


@updates("AWS::S3::Bucket", replaces=("BucketName",), name_property="BucketName")
def _update_bucket(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    if old.get("VersioningConfiguration") and not new.get("VersioningConfiguration"):
        raise TemplateError(f"{logical_id}: removing VersioningConfiguration is not emulated")
    _configure(deployment, logical_id, deployment.deployed.refs[logical_id], old, new)


@deletes("AWS::S3::Bucket")
def _delete_bucket(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("s3").delete_bucket(Bucket=resource.ref)  # fails unless empty, as on AWS


# CloudFormation's lifecycle rule properties -> the S3 API's (PutBucketLifecycleConfiguration).
_LIFECYCLE_PROPERTIES = {
    "Id",
    "Status",
    "Prefix",
    "ExpirationInDays",
    "ExpiredObjectDeleteMarker",
    "NoncurrentVersionExpiration",
    "AbortIncompleteMultipartUpload",
}


def _lifecycle_rule(logical_id: str, rule: Mapping[str, Any]) -> dict[str, Any]:
    unsupported = set(rule) - _LIFECYCLE_PROPERTIES
    if unsupported:
        raise TemplateError(f"{logical_id}: lifecycle rule properties {sorted(unsupported)}")
    converted: dict[str, Any] = {
        "ID": rule["Id"],
        "Status": rule["Status"],
        "Filter": {"Prefix": rule.get("Prefix", "")},
    }
    expiration: dict[str, Any] = {}
    if "ExpirationInDays" in rule:
        expiration["Days"] = int(rule["ExpirationInDays"])
    if "ExpiredObjectDeleteMarker" in rule:
        expiration["ExpiredObjectDeleteMarker"] = bool(rule["ExpiredObjectDeleteMarker"])
    if expiration:
        converted["Expiration"] = expiration
    if "NoncurrentVersionExpiration" in rule:
        days = rule["NoncurrentVersionExpiration"]["NoncurrentDays"]
        converted["NoncurrentVersionExpiration"] = {"NoncurrentDays": int(days)}
    if "AbortIncompleteMultipartUpload" in rule:
        days = rule["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"]
        converted["AbortIncompleteMultipartUpload"] = {"DaysAfterInitiation": int(days)}
    return converted


def _tls_only(statement: Mapping[str, Any]) -> bool:
    return statement.get("Effect") == "Deny" and "aws:SecureTransport" in statement.get(
        "Condition", {}
    ).get("Bool", {})


@provisions("AWS::S3::BucketPolicy", consumes=("Bucket", "PolicyDocument"))
def _s3_bucket_policy(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    # moto evaluates a Deny whose Condition it cannot check as an unconditional Deny, so
    # a TLS-only statement would refuse every request. All traffic here is in-process,
    # so those statements are recorded as not emulated (the static template tests check
    # they exist) and the rest of the policy is applied.
    document = dict(props["PolicyDocument"])
    statements = document["Statement"]
    kept = [s for s in statements if not _tls_only(s)]
    deployment.not_emulated.extend(
        NotEmulated(
            logical_id,
            f"statement {s.get('Sid', '(no Sid)')}",
            "TLS-only deny left out: moto cannot evaluate aws:SecureTransport and would deny "
            "every request; all traffic here is local",
        )
        for s in statements
        if _tls_only(s)
    )
    if kept:
        document["Statement"] = kept
        deployment.client("s3").put_bucket_policy(
            Bucket=props["Bucket"], Policy=json.dumps(document)
        )
    else:
        deployment.client("s3").delete_bucket_policy(Bucket=props["Bucket"])
    deployment.created(logical_id, logical_id)


@updates("AWS::S3::BucketPolicy", replaces=("Bucket",))
def _update_bucket_policy(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    _s3_bucket_policy(deployment, logical_id, new)  # Put replaces the bucket's policy


@deletes("AWS::S3::BucketPolicy")
def _delete_bucket_policy(
    deployment: Deployment, resource: Physical, props: dict[str, Any]
) -> None:
    deployment.client("s3").delete_bucket_policy(Bucket=props["Bucket"])
