"""moto_fixes.fidelity.s3_delete_notifications: each delete of a versioned object is
notified, as S3 notifies it (a delete marker created; a version deleted for good). Stock
moto notifies neither, but for the deletion of a key's last version."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import boto3
from richdoc_tools.local.moto_fixes.fidelity import s3_delete_notifications, s3_notifications

from tests.support.moto_fixes import moto_differs


def _removals(sqs: Any, queue_url: str) -> list[tuple[str, str, str | None]]:
    found = []
    for message in sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
        "Messages", []
    ):
        for record in json.loads(message["Body"]).get("Records", []):
            obj = record["s3"]["object"]
            if record["eventName"].startswith("ObjectRemoved:"):
                found.append((record["eventName"], obj["key"], obj.get("versionId")))
    return found


def _versioned_bucket_notifying_removals() -> tuple[Any, Any, str]:
    s3, sqs = boto3.client("s3"), boto3.client("sqs")
    queue = sqs.create_queue(QueueName="removed")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    s3.create_bucket(Bucket="ingest")
    s3.put_bucket_versioning(Bucket="ingest", VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_notification_configuration(
        Bucket="ingest",
        NotificationConfiguration={
            "QueueConfigurations": [{"QueueArn": arn, "Events": ["s3:ObjectRemoved:*"]}]
        },
    )
    sqs.purge_queue(QueueUrl=queue)  # the configuration's test event
    return s3, sqs, queue


@moto_differs("sends no notification when a delete marker is created in a versioned bucket")
def test_stock_moto_notifies_a_delete_marker_created(aws: None) -> None:
    s3, sqs, queue = _versioned_bucket_notifying_removals()
    for body in (b"1", b"2"):
        s3.put_object(Bucket="ingest", Key="a.pdf", Body=body)
    s3.delete_object(Bucket="ingest", Key="a.pdf")
    assert [event for event, _, _ in _removals(sqs, queue)] == ["ObjectRemoved:DeleteMarkerCreated"]


@moto_differs("sends no notification when one of a key's versions is deleted for good")
def test_stock_moto_notifies_a_version_deleted(aws: None) -> None:
    s3, sqs, queue = _versioned_bucket_notifying_removals()
    first = s3.put_object(Bucket="ingest", Key="a.pdf", Body=b"1")["VersionId"]
    s3.put_object(Bucket="ingest", Key="a.pdf", Body=b"2")
    s3.delete_object(Bucket="ingest", Key="a.pdf", VersionId=first)
    assert [event for event, _, _ in _removals(sqs, queue)] == ["ObjectRemoved:Delete"]


def test_with_the_fix_each_delete_of_a_versioned_object_is_notified(aws: None) -> None:
    s3, sqs, queue = _versioned_bucket_notifying_removals()
    first = s3.put_object(Bucket="ingest", Key="a b.pdf", Body=b"1")["VersionId"]
    second = s3.put_object(Bucket="ingest", Key="a b.pdf", Body=b"2")["VersionId"]
    with contextlib.ExitStack() as patched:
        s3_notifications.install(patched)
        s3_delete_notifications.install(patched)
        marker = s3.delete_object(Bucket="ingest", Key="a b.pdf")["VersionId"]
        assert _removals(sqs, queue) == [("ObjectRemoved:DeleteMarkerCreated", "a+b.pdf", marker)]
        s3.delete_object(Bucket="ingest", Key="a b.pdf", VersionId=first)
        assert _removals(sqs, queue) == [("ObjectRemoved:Delete", "a+b.pdf", first)]
        s3.delete_objects(
            Bucket="ingest", Delete={"Objects": [{"Key": "a b.pdf", "VersionId": second}]}
        )
        assert _removals(sqs, queue) == [("ObjectRemoved:Delete", "a+b.pdf", second)]
