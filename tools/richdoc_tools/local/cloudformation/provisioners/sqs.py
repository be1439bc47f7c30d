"""SQS: queues and their policies."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import provisions

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
    attributes = {
        key: json.dumps(props[key])
        if isinstance(props[key], dict)
        else str(props[key]).lower()
        if isinstance(props[key], bool)
        else str(props[key])
        for key in _QUEUE_ATTRIBUTES
        if key in props
    }
    url = deployment.client("sqs").create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    deployment.created(
        logical_id, url, Arn=deployment.arn("sqs", name), QueueName=name, QueueUrl=url
    )


@provisions("AWS::SQS::QueuePolicy", consumes=("Queues", "PolicyDocument"))
def _sqs_queue_policy(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    for url in props["Queues"]:
        deployment.client("sqs").set_queue_attributes(
            QueueUrl=url, Attributes={"Policy": json.dumps(props["PolicyDocument"])}
        )
    deployment.created(logical_id, logical_id)
