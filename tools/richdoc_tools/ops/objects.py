"""The objects a job names, read back: an artifact of its runs (docling, projection,
detection JSON, chunks, Markdown), its table CSVs, and the uploaded object version it is
about."""

from __future__ import annotations

from typing import TYPE_CHECKING

from richdoc.artifacts import ArtifactStore
from richdoc.document_results import written_keys
from richdoc_client.reader import ResultNotFound, ResultsReader, TableFile
from richdoc_client.tables import table_csv_name, table_node_of

if TYPE_CHECKING:
    from richdoc.contracts import SourceObject
    from richdoc.jobs import Job
    from richdoc_tools.ops.operator import Operator


def artifact(operator: Operator, key: str) -> bytes:
    """An object of the artifact bucket."""
    return ArtifactStore(operator.s3, operator.resources.artifact_bucket).get_bytes(key)


def source(operator: Operator, source: SourceObject) -> bytes:
    """The uploaded object version a job is about."""
    body: bytes = operator.s3.get_object(**source.get_kwargs())["Body"].read()
    return body


def tables(operator: Operator, job: Job) -> list[TableFile]:
    """The table CSVs of a job's run, in node order (none before runs wrote them), listed
    as a consumer's reader lists them."""
    keys = written_keys(job, operator.resources.artifact_bucket)
    if keys is None or keys.tables_prefix is None:
        return []
    return _reader(operator).tables(keys)


def table(operator: Operator, job: Job, name: str) -> bytes | None:
    """One table CSV of a job's run by its file name (``table-<node id>.csv``); None when
    the run wrote none so named."""
    node = table_node_of(name)
    keys = written_keys(job, operator.resources.artifact_bucket)
    if keys is None or keys.tables_prefix is None or node is None:
        return None
    if name != table_csv_name(node):  # a name, not a path
        return None
    try:
        return _reader(operator).store.read(keys.tables_prefix + name)
    except ResultNotFound:
        return None


def _reader(operator: Operator) -> ResultsReader:
    return ResultsReader.s3(operator.resources.artifact_bucket, client=operator.s3)
