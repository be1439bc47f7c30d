"""S3 lifecycle rules, applied as S3 applies them, on the embedded stack's clock.

moto stores a bucket's lifecycle configuration and applies none of it: nothing ever
expired locally, so no test saw a noncurrent source version go (and its job with it) or
run outputs disappear from under a manifest. ``Lifecycle.apply`` does what S3's
lifecycle does at the clock's time (``runtime.clock``), for the enabled
rules' prefix filters:

* ``Expiration`` (``Days``): a current object older than that is expired; in an
  unversioned bucket it is deleted (``s3:LifecycleExpiration:Delete``), in a versioned
  one a delete marker is put on it (``s3:LifecycleExpiration:DeleteMarkerCreated``);
* ``NoncurrentVersionExpiration`` (``NoncurrentDays``): a version that has been
  noncurrent that long (since its successor was created) is deleted for good
  (``s3:LifecycleExpiration:Delete``, with its version id);
* ``ExpiredObjectDeleteMarker``: a delete marker with no versions left behind it is
  removed (no notification).

S3 counts a rule's days from the object's creation (or from when it became noncurrent)
and rounds the moment up to the next midnight UTC; so does this. S3 runs its lifecycle
once a day, asynchronously; here ``apply`` runs it when called (tests, with the clock
advanced) or on a loop (``richdoc run`` and ``local serve``, whose clock may run faster):
every hour of the clock's time, and as soon as the clock is advanced. The notifications
go where the bucket's notification configuration says, as any other of its events
(``moto_fixes.fidelity.s3_notifications`` adds the version id).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from richdoc_tools.local.runtime.clock import DAY_S, StackClock
from richdoc_tools.local.runtime.loops import EventLoop

Action = Literal["Delete", "DeleteMarkerCreated", "ExpiredDeleteMarker"]


@dataclass(frozen=True)
class Expired:
    """One thing a lifecycle rule removed."""

    bucket: str
    key: str
    version_id: str | None
    action: Action
    rule: str


def due(start: datetime, days: int) -> datetime:
    """When a rule of ``days`` days acts on what started at ``start``: the next midnight
    UTC at or after ``start + days``."""
    moment = start + timedelta(days=days)
    midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight if midnight == moment else midnight + timedelta(days=1)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _prefix(rule: Any) -> str:
    if rule.prefix is not None:
        return str(rule.prefix)
    lc_filter = rule.filter
    if lc_filter is None:
        return ""
    if getattr(lc_filter, "prefix", None) is not None:
        return str(lc_filter.prefix)
    and_filter = getattr(lc_filter, "and_filter", None)
    return str(getattr(and_filter, "prefix", "") or "")


def _days(value: Any) -> int | None:
    return int(value) if value not in (None, "") else None


class Lifecycle:
    """Every bucket's lifecycle rules, in one account of the emulation."""

    def __init__(self, clock: StackClock, *, account: str, partition: str = "aws") -> None:
        self.clock = clock
        self.account = account
        self.partition = partition

    def apply(self, at: datetime | None = None) -> list[Expired]:
        """Apply every enabled rule of every bucket at the clock's time (or as S3 would at
        ``at``); what went."""
        from moto.s3.models import s3_backends

        backend = s3_backends[self.account][self.partition]
        now = at or self.clock.now()
        expired: list[Expired] = []
        for bucket in list(backend.buckets.values()):
            for rule in [r for r in getattr(bucket, "rules", []) if r.status == "Enabled"]:
                expired.extend(self._apply_rule(backend, bucket, rule, now))
        return expired

    def _apply_rule(self, backend: Any, bucket: Any, rule: Any, now: datetime) -> list[Expired]:
        from moto.s3.models import FakeDeleteMarker

        prefix = _prefix(rule)
        current_days = _days(rule.expiration_days)
        noncurrent_days = _days(rule.nve_noncurrent_days)
        drop_markers = str(rule.expired_object_delete_marker).lower() == "true"
        expired: list[Expired] = []
        for name in [k for k in list(bucket.keys.keys()) if k.startswith(prefix)]:
            versions = list(bucket.keys.getlist(name, []))
            if not versions:
                continue
            if bucket.is_versioned and noncurrent_days is not None:
                for older, newer in itertools.pairwise(versions):
                    if isinstance(older, FakeDeleteMarker):
                        continue
                    if now >= due(_aware(newer.last_modified), noncurrent_days):
                        self._delete_version(backend, bucket, name, older)
                        expired.append(
                            Expired(bucket.name, name, str(older.version_id), "Delete", rule.id)
                        )
                versions = list(bucket.keys.getlist(name, []))
            latest = versions[-1] if versions else None
            if latest is None:
                continue
            if (
                current_days is not None
                and not isinstance(latest, FakeDeleteMarker)
                and now >= due(_aware(latest.last_modified), current_days)
            ):
                expired.append(self._expire_current(backend, bucket, name, latest, rule.id))
                continue
            if drop_markers and isinstance(latest, FakeDeleteMarker) and len(versions) == 1:
                dict.pop(bucket.keys, name)  # a marker has no body to dispose of
                expired.append(
                    Expired(
                        bucket.name, name, str(latest.version_id), "ExpiredDeleteMarker", rule.id
                    )
                )
        return expired

    def _delete_version(self, backend: Any, bucket: Any, name: str, version: Any) -> None:
        from moto.s3 import notifications

        remaining = [v for v in bucket.keys.getlist(name) if v is not version]
        if remaining:
            bucket.keys.setlist(name, remaining)
        else:
            bucket.keys.pop(name)
        notifications.send_event(
            backend.account_id,
            notifications.S3NotificationEvent.LIFECYCLEEXPIRATION_DELETE_EVENT,
            bucket,
            version,
        )

    def _expire_current(
        self, backend: Any, bucket: Any, name: str, latest: Any, rule: str
    ) -> Expired:
        from moto.s3 import notifications

        if not bucket.is_versioned:
            bucket.keys.pop(name)
            notifications.send_event(
                backend.account_id,
                notifications.S3NotificationEvent.LIFECYCLEEXPIRATION_DELETE_EVENT,
                bucket,
                latest,
            )
            return Expired(bucket.name, name, None, "Delete", rule)
        marker = backend._set_delete_marker(bucket.name, name)
        notifications.send_event(
            backend.account_id,
            notifications.S3NotificationEvent.LIFECYCLE_EXPIRATION_DELETE_MARKER_CREATED_EVENT,
            bucket,
            marker,
        )
        return Expired(bucket.name, name, str(marker.version_id), "DeleteMarkerCreated", rule)


class LifecycleLoop(EventLoop):
    """Applies the lifecycle every hour of the clock's time (between one second and a
    minute of the wall clock), and as soon as the clock is advanced (``richdoc run`` and
    ``local serve``; tests call ``Lifecycle.apply`` themselves)."""

    def __init__(self, lifecycle: Lifecycle) -> None:
        interval = min(60.0, max(1.0, DAY_S / lifecycle.clock.rate / 24))
        super().__init__(
            name="s3-lifecycle", interval_s=interval, wakes_on=lifecycle.clock.advanced
        )
        self.lifecycle = lifecycle

    def tick(self) -> bool:
        self.lifecycle.apply()
        return False
