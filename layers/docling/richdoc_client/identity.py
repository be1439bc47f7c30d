"""Who a result is about: one version of an uploaded object, and the document it is a
version of.

A document is an object key in a bucket, whatever its versions: its id is the same for
every upload to that key, so the manifest of a document (``richdoc_client.manifest``)
stays in one place while new versions replace old ones. A job is one version of it.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

from pydantic import Field

from richdoc_client.wire import FrozenWireModel

#: The hex digits of a document id (as many as a job id has).
DOCUMENT_ID_LENGTH = 32
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
DocumentId = Annotated[str, Field(pattern=rf"^[0-9a-f]{{{DOCUMENT_ID_LENGTH}}}$")]


def document_id(bucket: str, key: str) -> str:
    """The version-independent id of the document at ``s3://bucket/key``.

    The first 32 hex digits of SHA-256 over ``bucket``, a NUL byte and ``key`` (UTF-8):
    the job id's rule without the version. Neither a bucket name nor an object key can
    hold a NUL, so no two documents share the input.
    """
    return hashlib.sha256(f"{bucket}\x00{key}".encode()).hexdigest()[:DOCUMENT_ID_LENGTH]


class SourceIdentity(FrozenWireModel):
    """One version of an object in the ingest bucket."""

    bucket: str
    key: str
    version_id: str | None = None  # None in an unversioned bucket
    sha256: Sha256 | None = None  # of the object's bytes; None until they were read

    @property
    def document_id(self) -> str:
        return document_id(self.bucket, self.key)
