"""The objects a job names, read back: an artifact of its runs (docling, projection,
detection JSON, chunks) and the uploaded object version it is about."""

from __future__ import annotations

from typing import TYPE_CHECKING

from richdoc.artifacts import ArtifactStore

if TYPE_CHECKING:
    from richdoc.contracts import SourceObject
    from richdoc_tools.ops.operator import Operator


def artifact(operator: Operator, key: str) -> bytes:
    """An object of the artifact bucket."""
    return ArtifactStore(operator.s3, operator.resources.artifact_bucket).get_bytes(key)


def source(operator: Operator, source: SourceObject) -> bytes:
    """The uploaded object version a job is about."""
    body: bytes = operator.s3.get_object(**source.get_kwargs())["Body"].read()
    return body
