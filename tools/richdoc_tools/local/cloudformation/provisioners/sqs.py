"""SQS: queues and their policies."""

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
    from types_boto3_sqs.literals import QueueAttributeNameType

    from richdoc_tools.local.cloudformation.deploy import Deployment

_QUEUE_ATTRIBUTES: tuple[QueueAttributeNameType, ...] = (
    "VisibilityTimeout",
    "MessageRetentionPeriod",
    "RedrivePolicy",
    "SqsManagedSseEnabled",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
)


@provisions("AWS::SQS::Queue", consumes=("QueueName", *_QUEUE_ATTRIBUTES))
def _sqs_queue(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("QueueName") or deployment.physical_name(logical_id, 80)
    url = deployment.client("sqs").create_queue(QueueName=name, Attributes=_attributes(props))[
        "QueueUrl"
    ]
    deployment.created(
        logical_id, url, Arn=deployment.arn("sqs", name), QueueName=name, QueueUrl=url
    )


def _attributes(props: dict[str, Any]) -> dict[QueueAttributeNameType, str]:
    return {
        key: json.dumps(props[key])
        if isinstance(props[key], dict)
        else str(props[key]).lower()
        if isinstance(props[key], bool)
        else str(props[key])
        for key in _QUEUE_ATTRIBUTES
        if key in props
    }


# What SetQueueAttributes puts back when the template no longer sets an attribute (SQS's
# defaults; an empty RedrivePolicy removes it).
_DEFAULTS: dict[QueueAttributeNameType, str] = {
    "VisibilityTimeout": "30",
    "MessageRetentionPeriod": "345600",
    "RedrivePolicy": "",
    "SqsManagedSseEnabled": "true",
    "DelaySeconds": "0",
    "ReceiveMessageWaitTimeSeconds": "0",
}


@updates("AWS::SQS::Queue", replaces=("QueueName", "FifoQueue"), name_property="QueueName")
def _update_queue(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    """Its attributes in place: the queue and the messages on it stay."""
    attributes = {k: v for k, v in _DEFAULTS.items() if k in old and k not in new}
    attributes.update(_attributes(new))
    deployment.client("sqs").set_queue_attributes(
        QueueUrl=deployment.deployed.refs[logical_id], Attributes=attributes
    )


@deletes("AWS::SQS::Queue")
def _delete_queue(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("sqs").delete_queue(QueueUrl=resource.ref)


@provisions("AWS::SQS::QueuePolicy", consumes=("Queues", "PolicyDocument"))
def _sqs_queue_policy(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    for url in props["Queues"]:
        deployment.client("sqs").set_queue_attributes(
            QueueUrl=url, Attributes={"Policy": json.dumps(props["PolicyDocument"])}
        )
    deployment.created(logical_id, logical_id)


@updates("AWS::SQS::QueuePolicy")
def _update_queue_policy(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    for url in set(old["Queues"]) - set(new["Queues"]):
        deployment.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    _sqs_queue_policy(deployment, logical_id, new)


@deletes("AWS::SQS::QueuePolicy")
def _delete_queue_policy(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    for url in props["Queues"]:
        deployment.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
