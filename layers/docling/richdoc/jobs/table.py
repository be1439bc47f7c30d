"""The jobs table's requests: update expressions, the run fence, paged queries.

boto3 builds conditions and key conditions (``boto3.dynamodb.conditions``), not update
expressions; ``Update`` is the small builder for those. Its placeholders (``#u<n>``,
``:u<n>``) never meet the ones boto3 generates for a condition in the same request
(``#n<n>``, ``:v<n>``), which it merges into the same maps.

Every write of a job's status is fenced: conditional on the job's current run and its
allowed previous statuses, so a stale run can never overwrite a newer one
(``fenced_update``, which raises ``StaleRun``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, Unpack

from boto3.dynamodb.conditions import Attr, ConditionBase
from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors
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

    def add(self, path: Path, amount: int) -> Update:
        """Add to a number (an absent attribute counts from 0; a map it is in must exist)."""
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
) -> Item:
    """One conditional update of the job item behind the run fence; the attributes it
    returns. StaleRun when the fence holds the write back."""
    try:
        with aws_errors("updating job"):
            written = table.update_item(
                Key=job_key(job_id),
                ConditionExpression=run_fence(run, allowed),
                ReturnValues=returns,
                **update.args(),
            )
    except ClientError as exc:
        if conditional_check_failed(exc):
            raise StaleRun(
                f"job {job_id}: run {run} is not current or not in {[str(a) for a in allowed]}"
            ) from exc
        raise
    return written["Attributes"]


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
