"""moto_fixes.fidelity.s3_notifications: an S3 event notification of a versioned bucket
carries the object's version id, as S3 sends it. Stock moto leaves ``versionId`` out."""

from __future__ import annotations

import contextlib

from richdoc_tools.local.moto_fixes.fidelity import s3_notifications

from tests.support.moto_fixes import moto_differs
from tests.support.s3_events import notified_records, versioned_bucket_notifying


def _notified_versions() -> tuple[str, list[str | None]]:
    """A put to a versioned bucket whose notifications go to a queue: the version the put
    made, and the version id of each ObjectCreated record the queue received."""
    s3, sqs, queue = versioned_bucket_notifying("s3:ObjectCreated:*")
    version = s3.put_object(Bucket="ingest", Key="a.pdf", Body=b"1")["VersionId"]
    return version, [record.s3.get_object.version_id for record in notified_records(sqs, queue)]


@moto_differs("sends notifications of a versioned bucket without the object's versionId")
def test_stock_moto_notifies_the_version_of_the_object(aws: None) -> None:
    version, notified = _notified_versions()
    assert notified == [version]


def test_with_the_fix_each_record_carries_its_object_s_version(aws: None) -> None:
    with contextlib.ExitStack() as exit_stack:
        s3_notifications.install(exit_stack)
        version, notified = _notified_versions()
    assert notified == [version]
