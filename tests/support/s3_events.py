"""The messages S3 sends to the ingest queue, as the starter receives them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
from aws_lambda_powertools.utilities.data_classes.s3_event import S3Event, S3EventRecord

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_s3.literals import EventType
    from types_boto3_sqs import SQSClient

BUCKET = "ingest"


def s3_notification(key: str, version: str | None = "v1", event: str = "ObjectCreated:Put") -> str:
    obj: dict[str, Any] = {"key": key, "size": 5, "eTag": "0123abcd", "sequencer": "01"}
    if version:
        obj["versionId"] = version
    return json.dumps(
        {
            "Records": [
                {
                    "eventVersion": "2.1",
                    "eventSource": "aws:s3",
                    "awsRegion": "us-east-1",
                    "eventName": event,
                    "s3": {"bucket": {"name": BUCKET}, "object": obj},
                }
            ]
        }
    )


def eventbridge_notification(key: str) -> str:
    return json.dumps(
        {
            "version": "0",
            "id": "1",
            "detail-type": "Object Created",
            "source": "aws.s3",
            "account": "123456789012",
            "time": "2026-12-01T00:00:00Z",
            "region": "us-east-1",
            "resources": [],
            "detail": {
                "version": "0",
                "bucket": {"name": BUCKET},
                "object": {"key": key, "size": 5, "etag": "0123abcd", "version-id": "v9"},
            },
        }
    )


def versioned_bucket_notifying(events: EventType) -> tuple[S3Client, SQSClient, str]:
    """The versioned bucket ``ingest``, whose notifications of ``events`` (``"s3:..."``)
    go to a queue: its S3 and SQS clients and the queue's URL, the queue empty."""
    s3, sqs = boto3.client("s3"), boto3.client("sqs")
    queue = sqs.create_queue(QueueName="notifications")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_notification_configuration(
        Bucket=BUCKET,
        NotificationConfiguration={"QueueConfigurations": [{"QueueArn": arn, "Events": [events]}]},
    )
    sqs.purge_queue(QueueUrl=queue)  # the configuration's test event
    return s3, sqs, queue


def notified_records(sqs: SQSClient, queue_url: str) -> list[S3EventRecord]:
    """The S3 event records of the messages the queue holds."""
    events = [
        S3Event(json.loads(message["Body"]))
        for message in sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
            "Messages", []
        )
    ]
    return [record for event in events if "Records" in event for record in event.records]
