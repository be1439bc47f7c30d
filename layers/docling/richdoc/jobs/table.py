"""The jobs table's requests: update expressions, the run fence, paged queries.

boto3 builds conditions and key conditions (``boto3.dynamodb.conditions``), not update
expressions; ``Update`` is the small builder for those. Its placeholders (``#u<n>``,
``:u<n>``) never meet the ones boto3 generates for a condition in the same request
(``#n<n>``, ``:v<n>``), which it merges into the same maps.

Every write of a job's status is fenced: conditional on the job's current run and its
allowed previous statuses, so a stale run can never overwrite a newer one
(``fenced_update``, which raises ``StaleRun``, or ``JobCancelled`` when the fence held
because the run was cancelled: the definition routes that to its ``Cancelled`` state).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, Unpack

from boto3.dynamodb.conditions import Attr, ConditionBase
from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.jobs.keys import job_key
from richdoc.jobs.model import Item, JobStatus

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodb.type_defs import (
        QueryInputTableQueryTypeDef,
        TableAttributeValueTypeDef,
    )


class StaleRun(Exception):
    """A write for a run that is no longer the job's current run (or not in that state)."""


class JobCancelled(StaleRun):
    """A write for a run an operator cancelled: the run stops without writing. (Its own
    error name, so the state machine ends such a run in ``Cancelled``, not
    ``Superseded``.)"""


# An attribute, or a path into a map attribute: ("source", "sha256").
Path = str | tuple[str, ...]


class UpdateArgs(TypedDict):
    """The update's keyword arguments for ``Table.update_item``."""

    UpdateExpression: str
    ExpressionAttributeNames: dict[str, str]
    # Absent rather than empty (DynamoDB refuses an empty map): an update that only removes.
    ExpressionAttributeValues: NotRequired[dict[str, TableAttributeValueTypeDef]]


@dataclass
class Update:
    """SET, REMOVE and ADD clauses with their placeholders; setting None removes."""

    _sets: list[str] = field(default_factory=list, init=False)
    _removes: list[str] = field(default_factory=list, init=False)
    _adds: list[str] = field(default_factory=list, init=False)
    _names: dict[str, str] = field(default_factory=dict, init=False)
    _values: dict[str, TableAttributeValueTypeDef] = field(default_factory=dict, init=False)

    def set(self, path: Path, value: TableAttributeValueTypeDef) -> Update:
        """Set ``path`` to ``value`` (an item value: JSON types, no floats); None removes."""
        if value is None:
            self._removes.append(self._path(path))
        else:
            self._sets.append(f"{self._path(path)} = {self._value(value)}")
        return self

    def remove(self, *paths: Path) -> Update:
        self._removes.extend(self._path(path) for path in paths)
        return self

    def set_if_absent(self, path: Path, value: TableAttributeValueTypeDef) -> Update:
        target = self._path(path)
        self._sets.append(f"{target} = if_not_exists({target}, {self._value(value)})")
        return self

    def add(self, path: Path, amount: int | builtins.set[str]) -> Update:
        """Add to a number (an absent attribute counts from 0; a map it is in must exist),
        or add members to a string set (idempotent: a member already there stays once)."""
        self._adds.append(f"{self._path(path)} {self._value(amount)}")
        return self

    def args(self) -> UpdateArgs:
        clauses = [
            f"{verb} {', '.join(parts)}"
            for verb, parts in (("SET", self._sets), ("REMOVE", self._removes), ("ADD", self._adds))
            if parts
        ]
        args: UpdateArgs = {
            "UpdateExpression": " ".join(clauses),
            "ExpressionAttributeNames": dict(self._names),
        }
        if self._values:
            args["ExpressionAttributeValues"] = dict(self._values)
        return args

    def _path(self, path: Path) -> str:
        parts = (path,) if isinstance(path, str) else path
        placeholders = []
        for part in parts:
            placeholder = f"#u{len(self._names)}"
            self._names[placeholder] = part
            placeholders.append(placeholder)
        return ".".join(placeholders)

    def _value(self, value: TableAttributeValueTypeDef) -> str:
        placeholder = f":u{len(self._values)}"
        self._values[placeholder] = value
        return placeholder


def conditional_check_failed(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def run_fence(run: int, allowed: Iterable[JobStatus]) -> ConditionBase:
    """Only run ``run`` of the job, in one of the ``allowed`` statuses."""
    return Attr("run").eq(run) & Attr("job_status").is_in([str(s) for s in allowed])


def fenced_update(
    table: Table,
    job_id: str,
    update: Update,
    *,
    run: int,
    allowed: tuple[JobStatus, ...],
    returns: Literal["ALL_NEW", "UPDATED_NEW"] = "ALL_NEW",
    also: ConditionBase | None = None,
) -> Item:
    """One conditional update of the job item behind the run fence (and ``also``, when
    given); the attributes it returns. StaleRun when the fence holds the write back;
    JobCancelled when it does because this run was cancelled."""
    condition = run_fence(run, allowed)
    try:
        with aws_errors("updating job"):
            written = retry_conflicts(
                table.update_item,
                Key=job_key(job_id),
                ConditionExpression=condition if also is None else condition & also,
                ReturnValues=returns,
                # The item as it was, so a refusal can say whether a cancel caused it.
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                **update.args(),
            )
    except ClientError as exc:
        if conditional_check_failed(exc):
            refused = (
                f"job {job_id}: run {run} is not current or not in {[str(a) for a in allowed]}"
            )
            if _cancelled(exc, run) and JobStatus.CANCELLED not in allowed:
                raise JobCancelled(f"job {job_id}: run {run} was cancelled") from exc
            raise StaleRun(refused) from exc
        raise
    return written["Attributes"]


def _cancelled(exc: ClientError, run: int) -> bool:
    """Whether the refused write found run ``run`` CANCELLED (the item returned with the
    refusal, in DynamoDB's wire format: the table resource does not convert errors)."""
    old: object = exc.response.get("Item")  # beside the error (the stubs do not say so)
    if not isinstance(old, Mapping):
        return False
    status, old_run = old.get("job_status"), old.get("run")
    return (
        isinstance(status, Mapping)
        and isinstance(old_run, Mapping)
        and status.get("S") == JobStatus.CANCELLED
        and old_run.get("N") == str(run)
    )


def query_all(table: Table, **query: Unpack[QueryInputTableQueryTypeDef]) -> list[Item]:
    """Every item a query finds, page after page."""
    items: list[Item] = []
    with aws_errors("querying jobs"):
        while True:
            page = table.query(**query)
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return items
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]
