"""An S3 event notification of a versioned bucket carries the object's version id.

What moto does: its notification records leave out ``s3.object.versionId``. The starter
would then head the key's latest version, and two quick uploads to one key would become
one job.

What AWS does: each record's ``s3.object`` carries ``versionId``, "The object version if
bucket is versioning-enabled, otherwise null" ("Event message structure":
https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html).

The fix adds each record's object's version id (none for an unversioned bucket).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

TARGET = "moto.s3.notifications._get_s3_event"
PATCHED = (TARGET,)

if TYPE_CHECKING:
    from moto.s3.models import FakeBucket

# _get_s3_event(event_name, bucket, key, notification_id): the key is whatever moto
# notifies of (a key, a delete marker), read here only for its version id.
EventBuilder = Callable[[str, "FakeBucket", object, str], dict[str, Any]]


def with_version_id(build: EventBuilder) -> EventBuilder:
    """moto's notification builder, with each record's ``s3.object.versionId`` as on AWS."""

    @functools.wraps(build)
    def build_with_version(
        event_name: str, bucket: FakeBucket, key: object, notification_id: str
    ) -> dict[str, Any]:
        event = build(event_name, bucket, key, notification_id)
        version = getattr(key, "version_id", None)
        if version and version != "null":  # unversioned buckets send none
            for record in event["Records"]:
                record["s3"]["object"].setdefault("versionId", version)
        return event

    return build_with_version


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, with_version_id(original(TARGET)))
