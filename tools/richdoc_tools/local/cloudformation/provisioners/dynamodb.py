"""DynamoDB: tables with their indexes, streams, encryption, point-in-time recovery and
deletion protection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import provisions

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
