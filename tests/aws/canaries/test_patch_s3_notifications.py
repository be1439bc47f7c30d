"""Canary: moto builds every S3 notification record in one function, without the object's
version id (patches.s3_notifications)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.patches import s3_notifications


def test_s3_notification_patch_point_builds_every_record_without_a_version_id() -> None:
    import moto.s3.notifications as notifications

    assert s3_notifications.TARGET == "moto.s3.notifications._get_s3_event"
    source = inspect.getsource(notifications)
    assert 'def _get_s3_event(\n    event_name: str, bucket: "FakeBucket", key: Any,' in source
    assert source.count("event_body = _get_s3_event(event_name, bucket, key, notification.id)") == 3
    # The day moto sends versionId itself, the patch (which only fills it in) can go.
    assert "versionId" not in inspect.getsource(notifications._get_s3_event)
