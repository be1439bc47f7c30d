"""Canary: moto's DeleteObject sends no removal notification for a versioned bucket, but
for the deletion of a key's last version (patches.s3_delete_notifications); with the patch,
each delete gets AWS's notification."""

from __future__ import annotations

import contextlib
import inspect
import json
from typing import Any

import boto3
from richdoc_tools.local.patches import s3_delete_notifications, s3_notifications


def test_delete_object_is_the_patch_point_and_notifies_only_a_last_version() -> None:
    from moto.s3.models import S3Backend

    assert s3_delete_notifications.TARGET == "moto.s3.models.S3Backend.delete_object"
    signature = inspect.signature(S3Backend.delete_object)
    assert list(signature.parameters)[:4] == ["self", "bucket_name", "key_name", "version_id"]
    source = inspect.getsource(S3Backend.delete_object)
    # The delete marker path sends nothing; a version delete only when none is left.
    assert "delete_marker = self._set_delete_marker(bucket_name, key_name)" in source
    assert source.count("notifications.send_event(") == 2
    assert "if not bucket.keys.getlist(key_name):" in source
    # What the patch reads from moto's answer.
    assert 'response_meta["delete-marker"] = "true"' in source
    assert 'response_meta["version-id"] = delete_marker.version_id' in source


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


def test_each_delete_of_a_versioned_object_is_notified_as_on_aws(aws: None) -> None:
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
    first = s3.put_object(Bucket="ingest", Key="a b.pdf", Body=b"1")["VersionId"]
    second = s3.put_object(Bucket="ingest", Key="a b.pdf", Body=b"2")["VersionId"]
    with contextlib.ExitStack() as patched:
        s3_notifications.install(patched)
        s3_delete_notifications.install(patched)
        sqs.purge_queue(QueueUrl=queue)  # the configuration's test event
        marker = s3.delete_object(Bucket="ingest", Key="a b.pdf")["VersionId"]
        assert _removals(sqs, queue) == [("ObjectRemoved:DeleteMarkerCreated", "a+b.pdf", marker)]
        s3.delete_object(Bucket="ingest", Key="a b.pdf", VersionId=first)
        assert _removals(sqs, queue) == [("ObjectRemoved:Delete", "a+b.pdf", first)]
        s3.delete_objects(
            Bucket="ingest", Delete={"Objects": [{"Key": "a b.pdf", "VersionId": second}]}
        )
        assert _removals(sqs, queue) == [("ObjectRemoved:Delete", "a+b.pdf", second)]
