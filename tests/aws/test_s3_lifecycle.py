"""S3 lifecycle rules as the embedded stack applies them
(richdoc_tools.local.runtime.s3_lifecycle), on its clock: moto stores a lifecycle
configuration and applies none of it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from richdoc_tools.local.moto_fixes.fidelity import s3_notifications
from richdoc_tools.local.runtime.clock import StackClock
from richdoc_tools.local.runtime.loops import wait_until
from richdoc_tools.local.runtime.s3_lifecycle import Expired, Lifecycle, LifecycleLoop, due

ACCOUNT = "123456789012"


def test_a_rules_days_end_at_the_next_midnight_utc() -> None:
    start = datetime(2026, 3, 1, 15, 30, tzinfo=UTC)
    assert due(start, 30) == datetime(2026, 4, 1, tzinfo=UTC)
    assert due(datetime(2026, 3, 1, tzinfo=UTC), 1) == datetime(2026, 3, 2, tzinfo=UTC)


def test_the_clock_runs_at_its_rate_and_only_forward() -> None:
    clock = StackClock.with_day(60)
    assert clock.rate == 1440
    before = clock.now()
    after = clock.advance(timedelta(days=3))
    assert after - before >= timedelta(days=3)
    with pytest.raises(ValueError):
        clock.advance(timedelta(seconds=-1))


@pytest.fixture
def buckets(aws: None) -> Iterator[dict[str, Any]]:
    with contextlib.ExitStack() as exit_stack:
        s3_notifications.install(exit_stack)  # each record names its version, as on AWS
        yield _buckets()


def _buckets() -> dict[str, Any]:
    s3, sqs = boto3.client("s3"), boto3.client("sqs")
    queue = sqs.create_queue(QueueName="removals")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    s3.create_bucket(Bucket="sources")
    s3.put_bucket_versioning(Bucket="sources", VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_notification_configuration(
        Bucket="sources",
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "QueueArn": queue_arn["Attributes"]["QueueArn"],
                    "Events": ["s3:LifecycleExpiration:*"],
                }
            ]
        },
    )
    s3.put_bucket_lifecycle_configuration(
        Bucket="sources",
        LifecycleConfiguration={
            "Rules": [
                {
                    "ID": "NoncurrentSourceVersions",
                    "Status": "Enabled",
                    "Filter": {"Prefix": ""},
                    "NoncurrentVersionExpiration": {"NoncurrentDays": 30},
                },
                {
                    "ID": "Markers",
                    "Status": "Enabled",
                    "Filter": {"Prefix": ""},
                    "Expiration": {"ExpiredObjectDeleteMarker": True},
                },
            ]
        },
    )
    s3.create_bucket(Bucket="results")
    s3.put_bucket_lifecycle_configuration(
        Bucket="results",
        LifecycleConfiguration={
            "Rules": [
                {
                    "ID": "RunOutputs",
                    "Status": "Enabled",
                    "Filter": {"Prefix": "jobs/"},
                    "Expiration": {"Days": 365},
                }
            ]
        },
    )
    return {"s3": s3, "sqs": sqs, "queue": queue}


def _notified(world: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    found = []
    sqs = world["sqs"]
    while batch := sqs.receive_message(QueueUrl=world["queue"], MaxNumberOfMessages=10).get(
        "Messages"
    ):
        for message in batch:
            for record in json.loads(message["Body"]).get("Records", []):
                obj = record["s3"]["object"]
                found.append((record["eventName"], obj["key"], obj.get("versionId")))
            sqs.delete_message(QueueUrl=world["queue"], ReceiptHandle=message["ReceiptHandle"])
    return found


def test_moto_alone_applies_no_lifecycle_rule(buckets: dict[str, Any]) -> None:
    s3 = buckets["s3"]
    s3.put_object(Bucket="sources", Key="a.pdf", Body=b"1")
    s3.put_object(Bucket="sources", Key="a.pdf", Body=b"2")
    versions = s3.list_object_versions(Bucket="sources")["Versions"]
    assert len(versions) == 2  # and so it stays: nothing expires


def test_a_noncurrent_version_expires_after_its_days_with_its_notification(
    buckets: dict[str, Any],
) -> None:
    s3 = buckets["s3"]
    first = s3.put_object(Bucket="sources", Key="a.pdf", Body=b"1")["VersionId"]
    second = s3.put_object(Bucket="sources", Key="a.pdf", Body=b"2")["VersionId"]
    s3.put_object(Bucket="results", Key="jobs/j/run-001/projection.json", Body=b"{}")
    s3.put_object(Bucket="results", Key="documents/d/manifest.json", Body=b"{}")
    clock = StackClock()
    lifecycle = Lifecycle(clock, account=ACCOUNT)
    clock.advance(timedelta(days=29))
    assert lifecycle.apply() == []
    clock.advance(timedelta(days=2))
    [expired] = lifecycle.apply()
    assert (expired.key, expired.version_id, expired.action) == ("a.pdf", first, "Delete")
    left = s3.list_object_versions(Bucket="sources")["Versions"]
    assert [v["VersionId"] for v in left] == [second]
    assert _notified(buckets) == [("LifecycleExpiration:Delete", "a.pdf", first)]
    clock.advance(timedelta(days=365))
    assert {(e.bucket, e.key) for e in lifecycle.apply()} == {
        ("results", "jobs/j/run-001/projection.json")
    }
    listed = s3.list_objects_v2(Bucket="results")["Contents"]
    assert [o["Key"] for o in listed] == ["documents/d/manifest.json"]  # no rule there


def test_a_delete_marker_left_alone_is_removed(buckets: dict[str, Any]) -> None:
    s3 = buckets["s3"]
    s3.put_object(Bucket="sources", Key="b.pdf", Body=b"1")
    s3.delete_object(Bucket="sources", Key="b.pdf")
    clock = StackClock()
    lifecycle = Lifecycle(clock, account=ACCOUNT)
    clock.advance(timedelta(days=31))
    # The version behind the marker, then the marker it leaves alone.
    assert [e.action for e in lifecycle.apply()] == ["Delete", "ExpiredDeleteMarker"]
    listed = s3.list_object_versions(Bucket="sources")
    assert not listed.get("Versions") and not listed.get("DeleteMarkers")


class CountedLifecycle(Lifecycle):
    """A lifecycle that keeps what each of its applications removed."""

    def __init__(self, clock: StackClock) -> None:
        super().__init__(clock, account=ACCOUNT)
        self.applied: list[list[Expired]] = []

    def apply(self, at: datetime | None = None) -> list[Expired]:
        expired = super().apply(at)
        self.applied.append(expired)
        return expired


def test_the_loop_applies_the_rules_as_soon_as_the_clock_is_advanced(
    buckets: dict[str, Any],
) -> None:
    """The loop applies the rules every hour of the clock's time, and at once when the
    clock is advanced: it wakes on the advance, not on its interval."""
    s3 = buckets["s3"]
    first = s3.put_object(Bucket="sources", Key="a.pdf", Body=b"1")["VersionId"]
    second = s3.put_object(Bucket="sources", Key="a.pdf", Body=b"2")["VersionId"]
    clock = StackClock()
    lifecycle = CountedLifecycle(clock)
    loop = LifecycleLoop(lifecycle)
    loop.interval_s = 24 * 3600.0  # its interval never comes round in this test
    loop.start()
    try:
        assert wait_until(lambda: len(lifecycle.applied) == 1, 60)  # the first, at start
        assert lifecycle.applied == [[]]
        clock.advance(timedelta(days=31))
        assert wait_until(lambda: len(lifecycle.applied) == 2, 60)
    finally:
        loop.stop()
        loop.join(timeout=5)
    assert [(e.key, e.version_id) for e in lifecycle.applied[1]] == [("a.pdf", first)]
    left = s3.list_object_versions(Bucket="sources")["Versions"]
    assert [v["VersionId"] for v in left] == [second]
    assert loop.errors == []
