"""DynamoDB: tables with their indexes, encryption, point-in-time recovery and deletion
protection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from richdoc_tools.local.provisioners.registry import provisions

if TYPE_CHECKING:
    from richdoc_tools.local.deploy import Deployment


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
    table = ddb.create_table(**kwargs)["TableDescription"]
    pitr = props.get("PointInTimeRecoverySpecification", {})
    if pitr.get("PointInTimeRecoveryEnabled"):
        ddb.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
        )
    deployment.created(logical_id, name, Arn=table["TableArn"])
