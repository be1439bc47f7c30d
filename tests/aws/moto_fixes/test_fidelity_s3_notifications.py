"""moto_fixes.fidelity.s3_notifications: an S3 event notification of a versioned bucket
carries the object's version id, as S3 sends it. Stock moto leaves ``versionId`` out."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import boto3
from richdoc_tools.local.moto_fixes.fidelity import s3_notifications

from tests.support.moto_fixes import moto_differs


def _notified_versions() -> tuple[str, list[str | None]]:
    """A put to a versioned bucket whose notifications go to a queue: the version the put
    made, and the version id of each ObjectCreated record the queue received."""
    s3, sqs = boto3.client("s3"), boto3.client("sqs")
    queue = sqs.create_queue(QueueName="created")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    s3.create_bucket(Bucket="ingest")
    s3.put_bucket_versioning(Bucket="ingest", VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_notification_configuration(
        Bucket="ingest",
        NotificationConfiguration={
            "QueueConfigurations": [{"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]
        },
    )
    version = s3.put_object(Bucket="ingest", Key="a.pdf", Body=b"1")["VersionId"]
    records: list[Any] = [
        record
        for message in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
        for record in json.loads(message["Body"]).get("Records", [])
    ]
    return version, [record["s3"]["object"].get("versionId") for record in records]


@moto_differs("sends notifications of a versioned bucket without the object's versionId")
def test_stock_moto_notifies_the_version_of_the_object(aws: None) -> None:
    version, notified = _notified_versions()
    assert notified == [version]


def test_with_the_fix_each_record_carries_its_object_s_version(aws: None) -> None:
    with contextlib.ExitStack() as exit_stack:
        s3_notifications.install(exit_stack)
        version, notified = _notified_versions()
    assert notified == [version]
