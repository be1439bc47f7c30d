"""Each delete of a versioned object is notified, as S3 notifies it.

What moto does: its DeleteObject sends no removal notification for a versioned bucket,
but ``s3:ObjectRemoved:Delete`` when the version deleted was the key's last.

What AWS does: S3 notifies ``s3:ObjectRemoved:DeleteMarkerCreated`` when a DeleteObject
without a version id puts a delete marker on a key, and ``s3:ObjectRemoved:Delete`` when
a version is deleted for good ("Supported event types":
https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-how-to-event-types-and-destinations.html).
The ingest bucket is versioned and a removed source deletes its jobs
(``richdoc.deletion``): each delete needs its notification.

The fix sends, after moto's DeleteObject, the notification moto did not.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from richdoc_tools.local.patch_targets import original, replace

TARGET = "moto.s3.models.S3Backend.delete_object"
PATCHED = (TARGET,)

Delete = Callable[..., tuple[bool, dict[str, Any]]]


def with_removal_notifications(delete: Delete) -> Delete:
    """moto's DeleteObject, then the notification AWS would send that moto does not."""
    from moto.s3 import notifications

    @functools.wraps(delete)
    def delete_object(
        self: Any, bucket_name: str, key_name: str, version_id: str | None = None, **kwargs: Any
    ) -> tuple[bool, dict[str, Any]]:
        bucket = self.get_bucket(bucket_name)
        versions = list(bucket.keys.getlist(key_name, [])) if bucket.is_versioned else []
        deleted = next((k for k in versions if str(k.version_id) == str(version_id)), None)
        result = delete(self, bucket_name, key_name, version_id, **kwargs)
        success, meta = result
        if not (success and bucket.is_versioned):
            return result
        if version_id is None and meta.get("delete-marker") == "true":
            marker = SimpleNamespace(name=key_name, version_id=meta["version-id"], etag="", size=0)
            event = notifications.S3NotificationEvent.OBJECT_REMOVED_DELETE_MARKER_CREATED_EVENT
            notifications.send_event(self.account_id, event, bucket, marker)
        elif deleted is not None and len(versions) > 1:  # moto notifies the last one itself
            event = notifications.S3NotificationEvent.OBJECT_REMOVED_DELETE_EVENT
            version = SimpleNamespace(  # a delete marker has neither an ETag nor a size
                name=key_name,
                version_id=deleted.version_id,
                etag=getattr(deleted, "etag", ""),
                size=getattr(deleted, "size", 0),
            )
            notifications.send_event(self.account_id, event, bucket, version)
        return result

    return delete_object


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, with_removal_notifications(original(TARGET)))
