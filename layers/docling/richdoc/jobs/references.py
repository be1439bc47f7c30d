"""Which live jobs use the parse artifacts of one document's bytes.

The DoclingDocument (and its shards and merges) is stored once per content digest,
``docling/<sha256>/...``, and shared by every job whose source has those bytes. Deleting
one of those jobs may delete it only when no other job uses it. The jobs table holds one
item per digest (``keys.digest_key``) with the string set ``jobs`` of the jobs that use
it. Its protocol:

* ``register``: before a job reads or writes the digest's artifacts (the parse and merge
  steps, on their first use of a ``docling/<sha256>/`` key), the job records the digest
  (``source.sha256``, only if the job is not DELETED, else ``StaleRun``), then joins the
  set (only if no purge of the digest is under way, else ``Transient``: the step is
  retried when the purge is over). Two single-item writes, in that order, and no
  transaction: the job item is written by every shard of a document at once (attempts,
  ``shard_done``), and on DynamoDB a write to an item an ongoing transaction holds fails
  (``TransactionConflictException``). The plan records the digest of a document it
  inspected before the shards start, so a shard's step 1 is a read that finds it there.
  Step 1 (``record_on_job``) is the only write of a job's digest.
* ``release``: a deleted job leaves the set (idempotent); True when the set is empty.
* ``begin_purge`` / ``end_purge``: deleting the digest's artifacts is a lease on the item,
  taken only while the set is empty. While it is held no job registers, so no job starts
  using the artifacts being deleted; a job registered before it keeps the set non-empty,
  so no lease is taken. The lease expires (``PURGE_LEASE_S``) if its holder dies.

Why the two writes are as safe as the transaction was (``richdoc.deletion`` deletes: mark
the job DELETED, then release and maybe purge the digest the job records):

1. *A job in the set records the digest*: step 1 comes before step 2, and nothing removes
   ``source.sha256``. So every purge of a job that could be in the set knows which set.
2. *No artifact is deleted while a job uses it*: a job uses them only after step 2, which
   no purge lease lets through, and a lease is only taken while the set is empty. This
   is the digest item's own condition, as before.
3. *A job deleted meanwhile does not stay in the set*: if the delete comes before step 1,
   step 1 refuses (StaleRun) and the job never joins. If it comes after step 1, the
   delete's purge may run before step 2 and miss the job; but the job records the
   digest (1.), and a DELETED job is purged again after its stage's work
   (``Deletion.discard_if_deleted``) and once more when its execution has ended (the
   reconciler), after which nothing of the run writes: that purge releases the job and
   deletes the artifacts if it was their last user. The window leaks nothing for good;
   it only keeps the artifacts for the length of one run. And the run ends StaleRun.

DynamoDB ADD and DELETE on a set are idempotent, so retried steps and cached shards
(which register again) change nothing; an empty set is removed by DynamoDB, which is
what "no job uses it" looks like.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.jobs.keys import digest_key, job_key
from richdoc.jobs.model import TTL_ATTRIBUTE, JobStatus
from richdoc.jobs.table import StaleRun, Update, conditional_check_failed
from richdoc.taxonomy import Transient

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table

# Longer than any purge takes: a purge runs in a Lambda invocation (60 s at most for the
# starter and the records function) or a command.
PURGE_LEASE_S = 900
DAY_S = 86400


# Days the parse artifacts are kept (ParseArtifactRetentionDays); unset or 0 keeps them.
PARSE_ARTIFACT_RETENTION_ENV = "RICHDOC_PARSE_ARTIFACT_RETENTION_DAYS"


class DigestReferences:
    """The digest items of the jobs table."""

    def __init__(
        self,
        table: Table,
        *,
        retention_days: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.table = table
        # The parse artifacts' retention: an item outlives the artifacts it is about.
        self.retention_days = retention_days or None
        self.clock = clock

    @classmethod
    def from_env(cls, table: Table) -> DigestReferences:
        retention = os.environ.get(PARSE_ARTIFACT_RETENTION_ENV, "").strip()
        return cls(table, retention_days=int(retention) if retention else None)

    def register(self, sha256: str, job_id: str) -> None:
        """``job_id`` uses the artifacts of ``sha256``: StaleRun if the job is DELETED (or
        gone), Transient while a purge of them is under way."""
        self.record_on_job(sha256, job_id)
        now = int(self.clock())
        update = Update().add("jobs", {job_id})
        if self.retention_days:  # a day past the artifacts, which expire as they age
            update.set(TTL_ATTRIBUTE, now + (self.retention_days + 1) * DAY_S)
        try:
            with aws_errors(f"registering job {job_id} on docling/{sha256}/"):
                retry_conflicts(
                    self.table.update_item,
                    Key=digest_key(sha256),
                    ConditionExpression=Attr("purging_until").not_exists()
                    | Attr("purging_until").lt(now),
                    **update.args(),
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                raise Transient(
                    f"the artifacts docling/{sha256}/ are being deleted; retry when done"
                ) from exc
            raise

    def record_on_job(self, sha256: str, job_id: str) -> None:
        """The job records that it uses ``sha256``'s artifacts (``source.sha256``), unless
        it already does: StaleRun if the job is DELETED or gone. The one write of a job's
        digest: step 1 of ``register``, and the plan's for a document it inspected."""
        with aws_errors(f"reading job {job_id}"):
            item = self.table.get_item(
                Key=job_key(job_id),
                ConsistentRead=True,
                ProjectionExpression="#status, #source.#sha256",
                ExpressionAttributeNames={
                    "#status": "job_status",
                    "#source": "source",
                    "#sha256": "sha256",
                },
            ).get("Item")
        if item is None or item.get("job_status") == JobStatus.DELETED:
            raise StaleRun(f"job {job_id} is deleted")
        source = item.get("source")
        if isinstance(source, dict) and source.get("sha256") == sha256:
            return
        try:
            with aws_errors(f"recording docling/{sha256}/ on job {job_id}"):
                retry_conflicts(
                    self.table.update_item,
                    Key=job_key(job_id),
                    ConditionExpression=Attr("pk").exists()
                    & Attr("job_status").ne(str(JobStatus.DELETED)),
                    **Update().set(("source", "sha256"), sha256).args(),
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                raise StaleRun(f"job {job_id} is deleted") from exc
            raise

    def release(self, sha256: str, job_id: str) -> bool:
        """``job_id`` no longer uses the artifacts; True when no job does."""
        try:
            with aws_errors(f"releasing docling/{sha256}/ of job {job_id}"):
                written = retry_conflicts(
                    self.table.update_item,
                    Key=digest_key(sha256),
                    UpdateExpression="DELETE #jobs :job",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeNames={"#jobs": "jobs"},
                    ExpressionAttributeValues={":job": {job_id}},
                    ReturnValues="ALL_NEW",
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                return True  # no job ever registered
            raise
        return not written["Attributes"].get("jobs")

    def begin_purge(self, sha256: str) -> str | None:
        """The lease to delete the artifacts, while no job uses them: its token, or None
        when a job uses them (or another purge holds the lease)."""
        now = int(self.clock())
        token = uuid.uuid4().hex
        try:
            with aws_errors(f"leasing docling/{sha256}/ for deletion"):
                retry_conflicts(
                    self.table.update_item,
                    Key=digest_key(sha256),
                    UpdateExpression="SET #purging = :until, #token = :token",
                    ConditionExpression=(
                        "attribute_not_exists(#jobs) "
                        "AND (attribute_not_exists(#purging) OR #purging < :now)"
                    ),
                    ExpressionAttributeNames={
                        "#jobs": "jobs",
                        "#purging": "purging_until",
                        "#token": "purge_token",
                    },
                    ExpressionAttributeValues={
                        ":until": now + PURGE_LEASE_S,
                        ":token": token,
                        ":now": now,
                    },
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                return None
            raise
        return token

    def end_purge(self, sha256: str, token: str) -> None:
        """The artifacts are deleted: the item goes (unless the lease passed to another)."""
        try:
            with aws_errors(f"ending the deletion of docling/{sha256}/"):
                retry_conflicts(
                    self.table.delete_item,
                    Key=digest_key(sha256),
                    ConditionExpression="#token = :token",
                    ExpressionAttributeNames={"#token": "purge_token"},
                    ExpressionAttributeValues={":token": token},
                )
        except ClientError as exc:
            if not conditional_check_failed(exc):
                raise

    def users(self, sha256: str) -> set[str]:
        """The jobs that use the artifacts now."""
        with aws_errors(f"reading docling/{sha256}/ references"):
            item = self.table.get_item(Key=digest_key(sha256), ConsistentRead=True).get("Item")
        return {str(job) for job in cast("set[str]", (item or {}).get("jobs", set()))}
