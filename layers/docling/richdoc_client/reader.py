"""Reading results: the documents (their manifests), and one run's projection, detection,
chunks, Markdown and table CSVs, from the results bucket or a copy of it in a directory.

    from richdoc_client.reader import ResultsReader

    reader = ResultsReader.s3("richdoc-artifacts-...")  # or ResultsReader.directory(path)
    for manifest in reader.documents():
        projection = reader.projection(manifest)
        for chunk in reader.chunks(manifest):
            ...

Every read names its source by the keys in a manifest or a completion event (data, not
code: a directory copy refuses keys that would leave its root). Documents of any minor
version of the major version read (members this package does not know are ignored); a
manifest that cannot be read at all is reported and passed over by ``documents()``,
never fatal to the listing. docs/consumers.md describes the layout.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import ValidationError

from richdoc_client.chunks import Chunk
from richdoc_client.detection import Detection
from richdoc_client.events import CompletionDetail
from richdoc_client.identity import document_id
from richdoc_client.manifest import MANIFEST_NAME, MANIFEST_PREFIX, Manifest, manifest_key
from richdoc_client.projection import Projection
from richdoc_client.results import ResultKeys
from richdoc_client.tables import CsvTable, read_table_csv, table_node_of

if TYPE_CHECKING:
    from botocore.response import StreamingBody
    from types_boto3_s3 import S3Client


class ResultNotFound(LookupError):
    """The store has no object under the key (an unknown document, a removed output)."""


class NoSuccessfulRun(LookupError):
    """The manifest or event names no successful run, so there are no outputs to read."""


@dataclass(frozen=True)
class TableFile:
    """One table CSV of a run: the TABLE node it is, and its key."""

    node: int
    key: str


@dataclass(frozen=True)
class UnreadableManifest:
    """A manifest ``documents()`` passed over: its key, and why it could not be read."""

    key: str
    reason: str


logger = logging.getLogger("richdoc_client")


def warn_unreadable(unreadable: UnreadableManifest) -> None:
    """``documents()``' default report: a warning on the ``richdoc_client`` logger."""
    logger.warning("passed over %s: %s", unreadable.key, unreadable.reason)


class ResultStore(Protocol):
    """Objects of one results bucket by key."""

    def read(self, key: str) -> bytes: ...

    def lines(self, key: str) -> Iterator[bytes]: ...

    def keys(self, prefix: str) -> Iterator[str]: ...

    def holds(self, bucket: str) -> bool: ...


class S3ResultStore:
    """The results bucket itself (``s3:GetObject`` and ``s3:ListBucket`` on it)."""

    def __init__(self, bucket: str, client: S3Client | None = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("s3")
        self.bucket = bucket
        self._client = client

    def _body(self, key: str) -> StreamingBody:
        try:
            return self._client.get_object(Bucket=self.bucket, Key=key)["Body"]
        except self._client.exceptions.NoSuchKey as exc:
            raise ResultNotFound(f"s3://{self.bucket}/{key} does not exist") from exc

    def read(self, key: str) -> bytes:
        data: bytes = self._body(key).read()
        return data

    def lines(self, key: str) -> Iterator[bytes]:
        body = self._body(key)
        try:
            yield from body.iter_lines()
        finally:
            body.close()

    def keys(self, prefix: str) -> Iterator[str]:
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield item["Key"]

    def holds(self, bucket: str) -> bool:
        return bucket == self.bucket


class DirectoryResultStore:
    """A copy of the results bucket in a directory, keys as relative paths
    (``aws s3 sync s3://<bucket> <root>`` makes one)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root) or path == self.root:
            raise ResultNotFound(f"{key!r} is not a key inside {self.root}")
        return path

    def read(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError) as exc:
            raise ResultNotFound(f"{key!r} does not exist in {self.root}") from exc

    def lines(self, key: str) -> Iterator[bytes]:
        try:
            with self._path(key).open("rb") as file:
                yield from (line.rstrip(b"\r\n") for line in file)
        except (FileNotFoundError, IsADirectoryError) as exc:
            raise ResultNotFound(f"{key!r} does not exist in {self.root}") from exc

    def keys(self, prefix: str) -> Iterator[str]:
        for path in sorted(self.root.rglob("*")):
            key = path.relative_to(self.root).as_posix()
            if path.is_file() and key.startswith(prefix):
                yield key

    def holds(self, bucket: str) -> bool:
        return True  # a copy of whichever bucket it was made from


# What the outputs of one run are read from: a manifest (its result), a completion event
# of a successful run (its outputs), or the keys themselves.
RunReference = Manifest | CompletionDetail | ResultKeys


class ResultsReader:
    def __init__(self, store: ResultStore) -> None:
        self.store = store

    @classmethod
    def s3(cls, bucket: str, *, client: S3Client | None = None) -> ResultsReader:
        return cls(S3ResultStore(bucket, client))

    @classmethod
    def directory(cls, root: Path | str) -> ResultsReader:
        return cls(DirectoryResultStore(root))

    # -- documents -------------------------------------------------------------------

    def documents(
        self, *, on_unreadable: Callable[[UnreadableManifest], None] = warn_unreadable
    ) -> Iterator[Manifest]:
        """Every document's manifest, in key order (that is, by document id). A manifest
        that is not one (not JSON, another major version, a member of the wrong type)
        is handed to ``on_unreadable`` and passed over; one deleted while listed is
        passed over silently (its document is gone)."""
        for key in self.store.keys(MANIFEST_PREFIX):
            parts = key.split("/")
            if len(parts) != 3 or parts[2] != MANIFEST_NAME:
                continue
            try:
                yield Manifest.model_validate_json(self.store.read(key))
            except ResultNotFound:
                continue
            except ValidationError as exc:
                on_unreadable(UnreadableManifest(key, _first_error(exc)))

    def manifest(self, document: str) -> Manifest:
        """The manifest of a document, by its id (``ResultNotFound``: it has none)."""
        return Manifest.model_validate_json(self.store.read(manifest_key(document)))

    def current(self, document: str) -> Manifest | None:
        """The document's manifest as it is now; None when it has none (its key was
        deleted, or none of its versions has finished)."""
        try:
            return self.manifest(document)
        except ResultNotFound:
            return None

    def manifest_of(self, bucket: str, key: str) -> Manifest:
        """The manifest of the document at ``s3://bucket/key`` of the ingest bucket."""
        return self.manifest(document_id(bucket, key))

    # -- one run's outputs -----------------------------------------------------------

    def outputs(self, run: RunReference) -> ResultKeys:
        if isinstance(run, ResultKeys):
            keys = run
        elif isinstance(run, Manifest):
            if run.result is None:
                raise NoSuccessfulRun(
                    f"document {run.document_id}: its newest version has no successful run "
                    f"(its job {run.job_id} is {run.status})"
                )
            keys = run.result.outputs
        else:
            if run.outputs is None:
                raise NoSuccessfulRun(f"job {run.job_id} run {run.run} ended {run.status}")
            keys = run.outputs
        if not self.store.holds(keys.bucket):
            raise ValueError(f"the outputs are in bucket {keys.bucket!r}, not in this store's")
        return keys

    def projection(self, run: RunReference) -> Projection:
        return Projection.model_validate_json(self.store.read(self.outputs(run).projection_key))

    def detection(self, run: RunReference) -> Detection:
        return Detection.model_validate_json(self.store.read(self.outputs(run).detection_key))

    def docling(self, run: RunReference) -> bytes:
        """The run's DoclingDocument, as the JSON the parse wrote (docling-core's
        ``DoclingDocument.model_validate_json`` reads it; this package does not need it)."""
        return self.store.read(self.outputs(run).docling_key)

    def chunks(self, run: RunReference) -> Iterator[Chunk]:
        """The run's chunks in order, read line by line."""
        keys = self.outputs(run)
        if keys.chunks_key is None:
            raise ResultNotFound(f"{keys.projection_key}: this run wrote no chunks")
        for line in self.store.lines(keys.chunks_key):
            if line:
                yield Chunk.model_validate_json(line)

    def markdown(self, run: RunReference) -> str:
        """The run's document as Markdown (``document.md``)."""
        keys = self.outputs(run)
        if keys.markdown_key is None:
            raise ResultNotFound(f"{keys.projection_key}: this run wrote no Markdown")
        return self.store.read(keys.markdown_key).decode("utf-8")

    def tables(self, run: RunReference) -> list[TableFile]:
        """The run's table CSVs, one per TABLE node, in node order."""
        keys = self.outputs(run)
        if keys.tables_prefix is None:
            raise ResultNotFound(f"{keys.projection_key}: this run wrote no table CSVs")
        found = [
            TableFile(node=node, key=key)
            for key in self.store.keys(keys.tables_prefix)
            if (node := table_node_of(key)) is not None
            and key == keys.tables_prefix + key.rsplit("/", 1)[-1]
        ]
        return sorted(found, key=lambda table: table.node)

    def table(self, table: TableFile) -> CsvTable:
        """One table CSV, read: its columns and rows (``CsvTable.records()`` as cells)."""
        return read_table_csv(self.store.read(table.key))


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "the document"
    return f"{where}: {error['msg']} ({exc.error_count()} error(s))"
