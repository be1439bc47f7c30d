"""moto_fixes.fidelity.s3_delete_notifications: each delete of a versioned object is
notified, as S3 notifies it (a delete marker created; a version deleted for good). Stock
moto notifies neither, but for the deletion of a key's last version."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from richdoc_tools.local.moto_fixes.fidelity import s3_delete_notifications, s3_notifications

from tests.support.moto_fixes import moto_differs
from tests.support.s3_events import notified_records, versioned_bucket_notifying

if TYPE_CHECKING:
    from types_boto3_sqs import SQSClient


def _removals(sqs: SQSClient, queue_url: str) -> list[tuple[str, str, str | None]]:
    return [
        (record.event_name, record.s3.get_object.key, record.s3.get_object.version_id)
        for record in notified_records(sqs, queue_url)
        if record.event_name.startswith("ObjectRemoved:")
    ]


@moto_differs("sends no notification when a delete marker is created in a versioned bucket")
def test_stock_moto_notifies_a_delete_marker_created(aws: None) -> None:
    s3, sqs, queue = versioned_bucket_notifying("s3:ObjectRemoved:*")
    for body in (b"1", b"2"):
        s3.put_object(Bucket="ingest", Key="a.pdf", Body=body)
    s3.delete_object(Bucket="ingest", Key="a.pdf")
    assert [event for event, _, _ in _removals(sqs, queue)] == ["ObjectRemoved:DeleteMarkerCreated"]


@moto_differs("sends no notification when one of a key's versions is deleted for good")
def test_stock_moto_notifies_a_version_deleted(aws: None) -> None:
    s3, sqs, queue = versioned_bucket_notifying("s3:ObjectRemoved:*")
    first = s3.put_object(Bucket="ingest", Key="a.pdf", Body=b"1")["VersionId"]
    s3.put_object(Bucket="ingest", Key="a.pdf", Body=b"2")
    s3.delete_object(Bucket="ingest", Key="a.pdf", VersionId=first)
    assert [event for event, _, _ in _removals(sqs, queue)] == ["ObjectRemoved:Delete"]


def test_with_the_fix_each_delete_of_a_versioned_object_is_notified(aws: None) -> None:
    s3, sqs, queue = versioned_bucket_notifying("s3:ObjectRemoved:*")
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
