"""SNS: the alarm topic and its subscriptions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    deletes,
    provisions,
    replaced_on_any_change,
    updates,
)

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment


@provisions("AWS::SNS::Topic", consumes=("TopicName", "KmsMasterKeyId"))
def _sns_topic(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("TopicName") or deployment.physical_name(logical_id, 256)
    attributes = {"KmsMasterKeyId": props["KmsMasterKeyId"]} if "KmsMasterKeyId" in props else {}
    arn = deployment.client("sns").create_topic(Name=name, Attributes=attributes)["TopicArn"]
    deployment.created(logical_id, arn, TopicName=name)


@provisions("AWS::SNS::Subscription", consumes=("TopicArn", "Protocol", "Endpoint"))
def _sns_subscription(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    # An email subscription stays pending confirmation; nothing is sent locally.
    arn = deployment.client("sns").subscribe(
        TopicArn=props["TopicArn"], Protocol=props["Protocol"], Endpoint=props["Endpoint"]
    )["SubscriptionArn"]
    deployment.created(logical_id, arn)


@updates("AWS::SNS::Topic", replaces=("TopicName",), name_property="TopicName")
def _update_topic(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    deployment.client("sns").set_topic_attributes(
        TopicArn=deployment.deployed.refs[logical_id],
        AttributeName="KmsMasterKeyId",
        AttributeValue=new.get("KmsMasterKeyId", ""),
    )


@deletes("AWS::SNS::Topic")
def _delete_topic(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("sns").delete_topic(TopicArn=resource.ref)


replaced_on_any_change("AWS::SNS::Subscription")


@deletes("AWS::SNS::Subscription")
def _delete_subscription(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("sns").unsubscribe(SubscriptionArn=resource.ref)
