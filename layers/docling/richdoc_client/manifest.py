"""The per-document manifest: one stable place that points at a document's current results.

``documents/<document id>/manifest.json`` in the results bucket (schema
``richdoc.manifest/v1``): the document (one object key in the ingest bucket), its newest
version whose job has finished, how that job's latest run ended, and that version's
latest successful run (its outputs and counts), or null while it has none. A new version
replaces the manifest's content; deleting the object removes the manifest. The pipeline
rewrites it at the terminal changes that publish completion events; docs/consumers.md
gives the rules.
"""

from __future__ import annotations

import json
from typing import Annotated, Final, Literal, Self

from pydantic import Field, model_validator

from richdoc_client.events import TerminalStatus
from richdoc_client.identity import DocumentId, SourceIdentity
from richdoc_client.results import ResultCounts, ResultKeys, ResultRef
from richdoc_client.versions import SchemaVersion, Versioned, since
from richdoc_client.wire import FrozenWireModel

SCHEMA: Final = "richdoc.manifest/v1"
VERSION: Final = "1.1"  # richdoc_client.versions: how it may change
#: Every manifest lives under this prefix of the results bucket.
MANIFEST_PREFIX: Final = "documents/"
MANIFEST_NAME: Final = "manifest.json"


# How the manifest's version's job ended (its deletion removes the manifest instead).
ManifestStatus = Literal[
    TerminalStatus.SUCCEEDED, TerminalStatus.DEAD_LETTERED, TerminalStatus.CANCELLED
]


def manifest_key(document_id: str) -> str:
    return f"{MANIFEST_PREFIX}{document_id}/{MANIFEST_NAME}"


class ManifestResult(FrozenWireModel):
    """The latest successful run of the manifest's version."""

    run: Annotated[int, Field(ge=1)]
    outputs: ResultKeys
    counts: ResultCounts


class Manifest(Versioned, FrozenWireModel):
    """Every member is present; ``result`` is null while the version has no successful run."""

    schema_: Literal["richdoc.manifest/v1"] = Field(default=SCHEMA, alias="schema")
    schema_version: SchemaVersion = Field(default=VERSION, json_schema_extra=since("1.1"))
    document_id: DocumentId
    source: SourceIdentity  # the newest version whose job has finished
    job_id: str  # that version's job
    run: Annotated[int, Field(ge=1)]  # the job's latest finished run
    status: ManifestStatus
    result: ManifestResult | None
    metadata: dict[str, str]  # the version's allow-listed user metadata and tags

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.document_id != self.source.document_id:
            raise ValueError("document_id is not the id of source.bucket and source.key")
        if self.status is TerminalStatus.SUCCEEDED and (
            self.result is None or self.result.run != self.run
        ):
            raise ValueError("a SUCCEEDED run is the manifest's result")
        if self.result is not None and self.result.run > self.run:
            raise ValueError("the result's run is later than the latest finished run")
        return self

    @property
    def result_ref(self) -> ResultRef | None:
        """Which run the document's current result is; None: it has none."""
        if self.result is None:
            return None
        return ResultRef(job_id=self.job_id, run=self.result.run)

    @property
    def key(self) -> str:
        return manifest_key(self.document_id)

    def to_json_bytes(self) -> bytes:
        """Sorted keys, UTF-8, indented by one space, trailing LF."""
        data = self.model_dump(mode="json", by_alias=True)
        return (json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1) + "\n").encode()
