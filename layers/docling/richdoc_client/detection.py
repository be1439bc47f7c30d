"""The model of ``detection.json`` (schema ``richdoc.detection/v1``).

At most one temporal ambiguity per document, about the DOCUMENT node, with its candidate
readings; ``richdoc.detection`` implements the rules (docs/detection.md), under the rule
set the document names (``rules``).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Final, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from richdoc_client.versions import SchemaVersion, Versioned, since
from richdoc_client.wire import AbsentOmitted, FrozenWireModel

SCHEMA: Final = "richdoc.detection/v1"
VERSION: Final = "1.2"  # richdoc_client.versions: how it may change
#: The rule set of every detection.json written before documents named theirs (1.0, 1.1).
FIRST_RULES: Final = "spec-v1"
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class AmbiguityKind(StrEnum):
    CONFLICTING_DATES = "conflicting_dates"
    RELATIVE_DATE = "relative_date"
    UNDATED = "undated"


# Field names are the wire names (camelCase where the contract says so): no alias layer
# between the code and detection.json.


class Candidate(AbsentOmitted, FrozenWireModel):
    label: str
    # µs since the epoch at UTC midnight of the date; absent: no interval.
    validFrom: int | SkipJsonSchema[None] = None
    # Index into projection.spans of the evidence block; absent for ``undated``.
    spanRef: Annotated[int, Field(ge=0)] | SkipJsonSchema[None] = None


class Ambiguity(FrozenWireModel):
    kind: AmbiguityKind
    nodeRef: Literal[0] = 0  # the DOCUMENT node: detection is document-level in v1
    detectorConfidence: Confidence
    appliedCandidateConfidence: Confidence
    candidates: list[Candidate]


class DetectionStats(FrozenWireModel):
    ambiguities: Annotated[int, Field(ge=0, le=1)]
    ambiguities_suppressed: Annotated[int, Field(ge=0)]


class Detection(Versioned, FrozenWireModel):
    schema_: Literal["richdoc.detection/v1"] = Field(default=SCHEMA, alias="schema")
    schema_version: SchemaVersion = Field(default=VERSION, json_schema_extra=since("1.1"))
    # The rule set that ran ("spec-v1", "contracts-v2"; docs/detection.md). An open
    # vocabulary: a later rule set is a new value, not a new schema.
    rules: str = Field(default=FIRST_RULES, json_schema_extra=since("1.2"))
    ambiguities: Annotated[list[Ambiguity], Field(max_length=1)]
    stats: DetectionStats

    def to_json_bytes(self) -> bytes:
        """Canonical serialization: sorted keys, UTF-8, absent fields omitted, trailing LF."""
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        text = json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1)
        return (text + "\n").encode("utf-8")
