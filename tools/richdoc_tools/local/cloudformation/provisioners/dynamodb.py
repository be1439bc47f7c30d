"""DynamoDB: tables with their indexes, streams, encryption, point-in-time recovery and
deletion protection; updated as CloudFormation updates a table (one global secondary
index created or deleted per update, the key schema or a custom name replaced)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    UpdateFailed,
    deletes,
    provisions,
    updates,
)
from richdoc_tools.local.cloudformation.template import TemplateError

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment


@provisions(
    "AWS::DynamoDB::Table",
    consumes=(
        "TableName",
        "AttributeDefinitions",
        "KeySchema",
        "BillingMode",
        "GlobalSecondaryIndexes",
        "SSESpecification",
        "PointInTimeRecoverySpecification",
        "DeletionProtectionEnabled",
        "StreamSpecification",  # read by richdoc_tools.local.runtime.streams, as Lambda reads it
    ),
    not_emulated={
        "TimeToLiveSpecification": "items past expires_at are not deleted locally",
    },
)
def _dynamodb_table(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    ddb = deployment.client("dynamodb")
    name = props.get("TableName") or deployment.physical_name(logical_id, 255)
    kwargs: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PROVISIONED"),
    }
    if "GlobalSecondaryIndexes" in props:
        kwargs["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    if "DeletionProtectionEnabled" in props:
        kwargs["DeletionProtectionEnabled"] = bool(props["DeletionProtectionEnabled"])
    if "SSESpecification" in props:
        kwargs["SSESpecification"] = {"Enabled": props["SSESpecification"]["SSEEnabled"]}
    if "StreamSpecification" in props:
        kwargs["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": props["StreamSpecification"]["StreamViewType"],
        }
    table = ddb.create_table(**kwargs)["TableDescription"]
    pitr = props.get("PointInTimeRecoverySpecification", {})
    if pitr.get("PointInTimeRecoveryEnabled"):
        ddb.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
        )
    attributes = {"Arn": table["TableArn"]}
    if "LatestStreamArn" in table:
        attributes["StreamArn"] = table["LatestStreamArn"]
    deployment.created(logical_id, name, **attributes)


# CloudFormation's reason for an update that adds or deletes more than one global
# secondary index (its AWS::DynamoDB::Table handler refuses it before calling DynamoDB).
MORE_THAN_ONE_GSI = "Cannot perform more than one GSI creation or deletion in a single update"


def _attribute_type_edited(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """AttributeDefinitions: adding or removing one is an update; editing the type of an
    existing one replaces the table (CloudFormation's reference, AWS::DynamoDB::Table)."""
    before = {a["AttributeName"]: a["AttributeType"] for a in old.get("AttributeDefinitions", [])}
    after = {a["AttributeName"]: a["AttributeType"] for a in new.get("AttributeDefinitions", [])}
    edited = sorted(n for n in before.keys() & after.keys() if before[n] != after[n])
    return f"the type of attribute {', '.join(edited)} changed" if edited else None


def index_changes(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[list[str], list[str], list[str]]:
    """The global secondary indexes an update creates, deletes, and changes in place (by
    name, in the template's order)."""
    before = {i["IndexName"]: i for i in old.get("GlobalSecondaryIndexes", [])}
    after = {i["IndexName"]: i for i in new.get("GlobalSecondaryIndexes", [])}
    created = [name for name in after if name not in before]
    deleted = [name for name in before if name not in after]
    changed = [
        name
        for name in after
        if name in before
        and (after[name]["KeySchema"], after[name].get("Projection"))
        != (before[name]["KeySchema"], before[name].get("Projection"))
    ]
    return created, deleted, changed


@updates(
    "AWS::DynamoDB::Table",
    replaces=("TableName", "KeySchema", "LocalSecondaryIndexes"),
    name_property="TableName",
    replaced_when=_attribute_type_edited,
)
def _update_table(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    """Global secondary indexes one at a time (CloudFormation refuses more in one update,
    and an index's key schema or projection cannot change); then the stream, point-in-time
    recovery, deletion protection and billing mode."""
    created, deleted, changed = index_changes(old, new)
    if changed:
        raise UpdateFailed(
            f"Cannot update GSI's properties other than Provisioned Throughput and Contributor "
            f"Insights Specification. You can create a new GSI with a different name. "
            f"({', '.join(changed)})"
        )
    if len(created) + len(deleted) > 1:
        raise UpdateFailed(MORE_THAN_ONE_GSI)
    if old.get("SSESpecification") != new.get("SSESpecification"):
        raise TemplateError(f"{logical_id}: changing SSESpecification is not emulated")
    ddb = deployment.client("dynamodb")
    name = deployment.deployed.refs[logical_id]
    if created or deleted:
        after = {i["IndexName"]: i for i in new.get("GlobalSecondaryIndexes", [])}
        action: Any = (
            {"Create": {k: after[created[0]][k] for k in ("IndexName", "KeySchema", "Projection")}}
            if created
            else {"Delete": {"IndexName": deleted[0]}}
        )
        ddb.update_table(
            TableName=name,
            AttributeDefinitions=new["AttributeDefinitions"],
            GlobalSecondaryIndexUpdates=[action],
        )
    if old.get("StreamSpecification") != new.get("StreamSpecification"):
        # The table stays; its stream is replaced (a new ARN), as CloudFormation documents.
        if old.get("StreamSpecification"):
            ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
        if new.get("StreamSpecification"):
            view = new["StreamSpecification"]["StreamViewType"]
            ddb.update_table(
                TableName=name,
                StreamSpecification={"StreamEnabled": True, "StreamViewType": view},
            )
    if old.get("BillingMode") != new.get("BillingMode"):
        ddb.update_table(TableName=name, BillingMode=new.get("BillingMode", "PROVISIONED"))
    protected = bool(new.get("DeletionProtectionEnabled", False))
    if bool(old.get("DeletionProtectionEnabled", False)) != protected:
        ddb.update_table(TableName=name, DeletionProtectionEnabled=protected)
    recovery = bool(
        new.get("PointInTimeRecoverySpecification", {}).get("PointInTimeRecoveryEnabled")
    )
    if old.get("PointInTimeRecoverySpecification") != new.get("PointInTimeRecoverySpecification"):
        ddb.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": recovery},
        )
    table = ddb.describe_table(TableName=name)["Table"]
    attributes = {"Arn": table["TableArn"]}
    if "LatestStreamArn" in table and new.get("StreamSpecification"):
        attributes["StreamArn"] = table["LatestStreamArn"]
    deployment.created(logical_id, name, **attributes)


@deletes("AWS::DynamoDB::Table")
def _delete_table(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("dynamodb").delete_table(TableName=resource.ref)
