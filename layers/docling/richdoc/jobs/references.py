"""Which live jobs use the parse artifacts of one document's bytes.

The DoclingDocument (and its shards and merges) is stored once per content digest,
``docling/<sha256>/...``, and shared by every job whose source has those bytes. Deleting
one of those jobs may delete it only when no other job uses it. The jobs table holds one
item per digest (``keys.digest_key``) with the string set ``jobs`` of the jobs that use
it. Its protocol:

* ``register``: before a job reads or writes the digest's artifacts (the parse and merge
  steps, on their first use of a ``docling/<sha256>/`` key), one transaction adds the job
  to the set and records the digest on the job (``source.sha256``), only if the job is
  not DELETED (else ``StaleRun``) and no purge of the digest is under way (else
  ``Transient``: the step is retried when the purge is over).
* ``release``: a deleted job leaves the set (idempotent); True when the set is empty.
* ``begin_purge`` / ``end_purge``: deleting the digest's artifacts is a lease on the item,
  taken only while the set is empty. While it is held no job registers, so no job starts
  using the artifacts being deleted; a job registered before it keeps the set non-empty,
  so no lease is taken. The lease expires (``PURGE_LEASE_S``) if its holder dies.

DynamoDB ADD and DELETE on a set are idempotent, so retried steps and cached shards
(which register again) change nothing; an empty set is removed by DynamoDB, which is
what "no job uses it" looks like.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors
from richdoc.jobs.keys import digest_key, job_key
from richdoc.jobs.model import TTL_ATTRIBUTE, JobStatus
from richdoc.jobs.table import StaleRun, conditional_check_failed
from richdoc.taxonomy import Transient

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

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
        """``job_id`` uses the artifacts of ``sha256``: StaleRun if the job is DELETED,
        Transient while a purge of them is under way."""
        now = int(self.clock())
        names = {"#jobs": "jobs", "#purging": "purging_until"}
        values: dict[str, Any] = {":job": {job_id}, ":now": now}
        update = "ADD #jobs :job"
        if self.retention_days:  # a day past the artifacts, which expire as they age
            names["#ttl"] = TTL_ATTRIBUTE
            values[":ttl"] = now + (self.retention_days + 1) * DAY_S
            update += " SET #ttl = :ttl"
        items: list[dict[str, Any]] = [
            {
                "Update": {
                    "TableName": self.table.name,
                    "Key": job_key(job_id),
                    "UpdateExpression": "SET #source.#sha256 = :sha256",
                    "ConditionExpression": "attribute_exists(pk) AND #status <> :deleted",
                    "ExpressionAttributeNames": {
                        "#source": "source",
                        "#sha256": "sha256",
                        "#status": "job_status",
                    },
                    "ExpressionAttributeValues": {
                        ":sha256": sha256,
                        ":deleted": str(JobStatus.DELETED),
                    },
                }
            },
            {
                "Update": {
                    "TableName": self.table.name,
                    "Key": digest_key(sha256),
                    "UpdateExpression": update,
                    "ConditionExpression": "attribute_not_exists(#purging) OR #purging < :now",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values,
                }
            },
        ]
        try:
            with aws_errors(f"registering job {job_id} on docling/{sha256}/"):
                # The table's client takes and gives Python values (the resource's
                # serialization), not the wire shapes its stubs describe.
                self.table.meta.client.transact_write_items(
                    TransactItems=cast("list[TransactWriteItemTypeDef]", items)
                )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise
            reasons = [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                raise StaleRun(f"job {job_id} is deleted") from exc
            if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
                raise Transient(
                    f"the artifacts docling/{sha256}/ are being deleted; retry when done"
                ) from exc
            raise Transient(f"registering job {job_id} on docling/{sha256}/: {reasons}") from exc

    def release(self, sha256: str, job_id: str) -> bool:
        """``job_id`` no longer uses the artifacts; True when no job does."""
        try:
            with aws_errors(f"releasing docling/{sha256}/ of job {job_id}"):
                written = self.table.update_item(
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
                self.table.update_item(
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
                self.table.delete_item(
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
