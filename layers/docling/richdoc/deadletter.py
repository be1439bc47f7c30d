"""Dead-letter messages: what a failed run leaves on the DLQ, and how operators redrive it.

The state machine's catch path sends the ORIGINAL ingest message body to the DLQ with
``richdoc.*`` message attributes (job id, run, kind, reason, feature, error). Redriving
moves it back to the ingest queue, where the starter recognises the attributes and starts
the next run of the same job. Messages SQS itself moved to the DLQ (the starter failed
``maxReceiveCount`` times) carry no attributes and simply start or resume their job.

Operators read and redrive the queue with ``richdoc_tools.ops.dead_letter_queue``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from richdoc.awstext import sqs_string
from richdoc.taxonomy import Failure

if TYPE_CHECKING:
    from types_boto3_sqs.type_defs import MessageAttributeValueTypeDef

ATTR_JOB_ID = "richdoc.job_id"
ATTR_RUN = "richdoc.run"
ATTR_KIND = "richdoc.kind"
ATTR_REASON = "richdoc.reason"
ATTR_FEATURE = "richdoc.feature"
ATTR_ERROR = "richdoc.error"
# Bytes of UTF-8 an attribute value may take: the six stay under 4 KB, and the body is
# the ingest message of one S3 notification (a few KB: a key is at most 1,024 bytes),
# so a dead letter stays far inside SQS's 256 KiB for the body and its attributes.
MAX_ATTRIBUTE_BYTES = 1000


def failure_attributes(
    job_id: str, run: int, failure: Failure
) -> dict[str, MessageAttributeValueTypeDef]:
    """SQS ``MessageAttributes`` for a dead-lettered run. A reason (or a feature tag)
    may hold an object key, and S3 keys may hold control characters SQS refuses: every
    value is made one SQS accepts (``richdoc.awstext.sqs_string``), or the send would be
    refused on every retry. Empty values are left out (SQS refuses them too)."""
    values = {
        ATTR_JOB_ID: job_id,
        ATTR_RUN: str(run),
        ATTR_KIND: str(failure.kind),
        ATTR_REASON: failure.reason,
        ATTR_FEATURE: failure.feature,
        ATTR_ERROR: failure.error,
    }
    return {
        name: {
            "DataType": "Number" if name == ATTR_RUN else "String",
            "StringValue": sqs_string(value, MAX_ATTRIBUTE_BYTES),
        }
        for name, value in values.items()
        if value
    }


def redrive_attributes(job_id: str, run: int) -> dict[str, MessageAttributeValueTypeDef]:
    """The attributes that ask the starter for the next run of ``run`` (what a redriven
    dead-letter message carries; ``richdoc jobs redrive`` sends the job's stored ingest
    message with them)."""
    return {
        ATTR_JOB_ID: {"DataType": "String", "StringValue": job_id},
        ATTR_RUN: {"DataType": "Number", "StringValue": str(run)},
    }


def attribute_values(attributes: Mapping[str, Any]) -> dict[str, str]:
    """Accept both SQS API shape (StringValue) and Lambda event shape (stringValue)."""
    values = {}
    for name, attr in attributes.items():
        if isinstance(attr, str):
            values[name] = attr
        elif isinstance(attr, Mapping):
            value = attr.get("StringValue", attr.get("stringValue"))
            if value is not None:
                values[name] = str(value)
    return values


@dataclass(frozen=True)
class RedriveMarker:
    """Which dead-lettered run a redriven message belongs to."""

    job_id: str
    run: int

    @classmethod
    def from_attributes(cls, attributes: Mapping[str, Any]) -> RedriveMarker | None:
        values = attribute_values(attributes)
        if ATTR_JOB_ID not in values or ATTR_RUN not in values:
            return None
        try:
            return cls(job_id=values[ATTR_JOB_ID], run=int(values[ATTR_RUN]))
        except ValueError:
            return None
