"""The typed contract of every state: what each Lambda receives and returns.

The state machine (``statemachine/pipeline.asl.json``) moves JSON between states; this
module is that JSON's schema. The starter builds an ``ExecutionInput``; the data then
grows as the run goes (each under the ``ResultPath`` the definition gives it)::

    $                   ExecutionInput        job_id, run, source, options, message
    $.results.plan      PlanOutput            Plan (whole, or page-range shards)
    $.results.shards    list[ShardParsed]     ParseShards (the Map: one per shard)
    $.results.parse     ParseOutput           ParseTier1/2/3, or Merge (which replaces
                                              $.results with {parse})
    $.results.project   ProjectOutput         Project
    $.results.detect    DetectOutput          Detect
    $.error             CaughtError           any Catch (Error, Cause)
    $.failed_at         FailedAt              the ...Failed Pass states
    $.failure           FailureRecorded       RecordFailure (read by the DLQ send and Choice)
    $.dead_letter       DeadLetterSent        SendToDeadLetterQueue (read by MarkDeadLettered)

The steps' models are here; the failure path's payloads (from ``$.error`` down) and the
records function's calls (``RecordsAction``, one action per call, and their answers) are
in ``richdoc.records.calls``, so that a step handler's cold start never builds them.

Each Task's ``Parameters`` build the input model of the Lambda it invokes (``PLAN``,
``PARSE``, ``MERGE``, ``PROJECT``, ``DETECT`` below; the records function takes a
``RecordsAction``), and a
handler returns its output model dumped with ``model_dump(mode="json")`` (the
``richdoc.stage.stage_handler`` decorator does it). ``tests/unit/test_contracts.py`` runs every
route of the definition over these models, so a field renamed on one side only fails it.

Pages: a field named ``pages`` is always a page range (``PageSpan``), a count of pages
is ``page_count``.

``SourceObject`` is the one type for "the uploaded object": the starter makes it from the
S3 notification, the job record stores it, the execution input carries it, the plan and
the parse read it, the project step names its results after it.

Nothing here may import docling-core or the published models (``richdoc_client``
beyond the failure kinds and the wire bases): the project and detect handlers' cold
start is benchmarked (bench/coldstart_bench.py), and the starter and records handlers
never need them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (
    Annotated,
    Generic,
    Literal,
    NotRequired,
    TypedDict,
    TypeVar,
)

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from richdoc.taxonomy import MemoryUse
from richdoc_client.wire import AbsentOmitted


class Contract(BaseModel):
    """Base of the state payloads: immutable values; keys a model does not know are
    ignored, so the definition may pass more than a step reads."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class ObjectAddress(TypedDict):
    """The request fields that name one object version (boto3 keyword arguments)."""

    Bucket: str
    Key: str
    VersionId: NotRequired[str]


# ---- the source object ---------------------------------------------------------------------


class SourceObject(Contract):
    """One version of an object in the ingest bucket: what a job is about."""

    bucket: str
    key: str  # decoded (S3 notifications URL-encode it)
    version_id: str | None = None
    etag: str | None = None
    size: int | None = None
    # Known once the bytes are read: on the job record, written by the first step that uses
    # their parse artifacts (richdoc.jobs.references).
    sha256: str | None = None

    def get_kwargs(self) -> ObjectAddress:
        """``Bucket``/``Key``/``VersionId`` for boto3's ``get_object`` and ``head_object``."""
        kwargs: ObjectAddress = {"Bucket": self.bucket, "Key": self.key}
        if self.version_id:
            kwargs["VersionId"] = self.version_id
        return kwargs


# ---- the execution ---------------------------------------------------------------------------


class JobOptions(Contract):
    clarify: bool = False  # emit temporal ambiguities (detect)


class ExecutionInput(Contract):
    """What the starter starts an execution with (and the reconciler reads back)."""

    job_id: str
    run: int
    source: SourceObject
    options: JobOptions
    message: str  # the original ingest message body, dead-lettered as it came


class PageSpan(Contract):
    """Pages ``start`` to ``end`` of a document, 1-based and inclusive (as docling's
    ``convert(page_range=...)`` takes them): one page-range shard, wherever it goes.

    Its forms, and the only code that writes or reads them: the JSON object
    ``{"start": 51, "end": 100}`` in state payloads and worker tasks (the model's own);
    the text ``51-100`` (``str``, ``parse``) in the job records (an attempt's ``pages``,
    the finished shards, the attempt series' names: ``PageSpanText``); ``pages-51-100``
    (``key_name``) in artifact keys (``richdoc.artifacts.docling_key``).
    """

    start: int = Field(ge=1)
    end: int

    @model_validator(mode="after")
    def _ordered(self) -> PageSpan:
        if self.end < self.start:
            raise ValueError(f"a page range ends at or after its start: {self.start}-{self.end}")
        return self

    @property
    def page_count(self) -> int:
        return self.end - self.start + 1

    def __contains__(self, page_no: object) -> bool:
        return isinstance(page_no, int) and self.start <= page_no <= self.end

    def __str__(self) -> str:
        """The text form: ``51-100``."""
        return f"{self.start}-{self.end}"

    @classmethod
    def parse(cls, text: str) -> PageSpan:
        """The range of its text form (``51-100``); ``ValueError`` for anything else."""
        start, dash, end = text.partition("-")
        if not (dash and start.isdigit() and end.isdigit()):
            raise ValueError(f"a page range reads START-END, not {text!r}")
        return cls(start=int(start), end=int(end))

    @property
    def key_name(self) -> str:
        """How an artifact key names the range: ``pages-51-100``."""
        return f"pages-{self}"


def _span_of_text(value: object) -> object:
    return PageSpan.parse(value) if isinstance(value, str) else value


# A PageSpan stored as its text form (``51-100``): the job records' attribute values, as
# they have always been written.
PageSpanText = Annotated[
    PageSpan, BeforeValidator(_span_of_text), PlainSerializer(str, return_type=str)
]


class StageInput(Contract):
    """The fields every step handler receives."""

    job_id: str
    run: int
    execution: str | None = None  # the execution name, for the logs

    def attempt_tier(self) -> int | None:
        """The memory tier the attempt record and the duration metric carry."""
        return None

    def attempt_pages(self) -> PageSpan | None:
        """The page range the attempt record carries: a shard's."""
        return None


class JobDecision(Contract):
    """What a step's output decides for its job, written within the step's attempt (a
    failed write fails the attempt; ``richdoc.stage``): how many parse invocations
    convert the document (the shards the job's progress counts), and the digest of the
    bytes the step inspected, so that the shards' registrations on that digest find it on
    the job (``richdoc.jobs.references``)."""

    shard_count: int
    sha256: str | None = None


class StageOutput(Contract):
    """The base of a step's output."""

    def decision(self) -> JobDecision | None:
        """What the output decides for the job (None: nothing; the plan decides)."""
        return None

    def attempt_cached(self) -> bool | None:
        """Whether the attempt was answered from the artifact cache (its record says so)."""
        return None

    def attempt_memory(self) -> MemoryUse | None:
        """The parse child's memory, for the attempt record."""
        return None


# ---- plan ------------------------------------------------------------------------------------


class PlanInput(StageInput):
    source: SourceObject


class PlanOutput(StageOutput):
    """How the document is parsed (``richdoc.parse.plan_step.plan_request``): its
    conversion (``format``, ``pipeline``, ``contract``), which reaches every parse in its
    input; whole, or as page-range ``shards`` (a PDF or image whose pages cost more than
    ``RICHDOC_SHARD_PAGES`` text pages: a page OCR reads costs several), at most
    ``max_concurrency`` at once (the Map state's ``MaxConcurrencyPath``: the template's
    ``ShardMaxConcurrency``). About 30 bytes a shard: 2.4 KB for 80."""

    sha256: str | None  # of the bytes inspected; None where the plan needed no download
    size: int | None
    format: str
    pipeline: str
    contract: str
    page_count: int | None  # as inspected; None where not inspected
    ocr_page_count: int | None = None  # how many pages OCR reads; None where not inspected
    page_cost: int | None = None  # the pages' cost in text pages; None where not inspected
    sharded: bool
    shards: list[PageSpan]  # in page order; empty when parsed whole
    shard_count: int  # parse invocations that convert the document: 1 when whole
    max_concurrency: int
    seconds: float

    def decision(self) -> JobDecision:
        return JobDecision(shard_count=self.shard_count, sha256=self.sha256)


# ---- parse -----------------------------------------------------------------------------------


class ParseInput(StageInput):
    """One parse: of the whole document or of one shard's ``pages``, at a memory tier,
    converted as the run's plan decided (``PlanOutput``'s ``format``, ``pipeline`` and
    ``contract``: ``richdoc.parse.settings.Conversion``)."""

    tier: int
    accept_partial: bool = False  # only the biggest tier keeps a partial conversion
    source: SourceObject
    format: str
    pipeline: str
    contract: str  # the processor contract the DoclingDocument is stored under
    pages: PageSpan | None = None  # one shard's pages; None: the whole document

    def attempt_tier(self) -> int | None:
        return self.tier

    def attempt_pages(self) -> PageSpan | None:
        return self.pages


class ParseOutput(StageOutput):
    """The parse step's state output (``richdoc.parse.reports.ParseReport`` is the detail),
    for the whole document or one shard; the merge of a sharded document answers with
    the same model, so project and detect read either alike."""

    docling_key: str
    sha256: str
    size: int
    pipeline: str
    page_count: int  # docling's: PDF pages, PPTX slides, XLSX sheets; 0 otherwise
    cached: bool
    partial: bool
    failed_pages: list[int]
    seconds: float
    page_range: PageSpan | None = None  # the shard's pages; None for the whole document
    # The isolated child's memory ceiling and peak resident set (None: the cache answered,
    # or a merge).
    mem_ceiling_mb: int | None = None
    peak_rss_mb: int | None = None

    def attempt_cached(self) -> bool | None:
        return self.cached

    def attempt_memory(self) -> MemoryUse | None:
        if self.mem_ceiling_mb is None:
            return None
        return MemoryUse(ceiling_mb=self.mem_ceiling_mb, peak_rss_mb=self.peak_rss_mb)


class ShardParsed(Contract):
    """One shard's parse as the Map state keeps it (the shard tasks' ``ResultSelector``):
    what the merge needs, and no more (docs/shards.md, "Budgets")."""

    page_range: PageSpan
    docling_key: str
    cached: bool
    partial: bool
    failed_pages: list[int]


# ---- merge -----------------------------------------------------------------------------------


class MergeInput(StageInput):
    """The plan and its shards' parses, in the plan's order (the Map keeps item order)."""

    plan: PlanOutput
    shards: list[ShardParsed]


# ---- project ---------------------------------------------------------------------------------


class ProjectInput(StageInput):
    """The run's source object and its parse: the step names the projection's source
    after the object's key and the chunks' document after the object (bucket and key)."""

    source: SourceObject
    docling_key: str
    sha256: str  # of the source's bytes, as the parse read them
    pipeline: str  # the docling pipeline that parsed it

    @model_validator(mode="before")
    @classmethod
    def _as_an_earlier_definition_says_it(cls, data: object) -> object:
        """A run an earlier release's definition started (a run in flight across an
        upgrade) passes the same as the key in ``source.name``, the bucket beside it, and
        the parse's sha256 and pipeline in ``source``."""
        if not isinstance(data, dict) or "bucket" not in data:
            return data
        earlier = data.get("source")
        if not isinstance(earlier, dict) or "name" not in earlier:
            return data
        return {
            **data,
            "source": {"bucket": data["bucket"], "key": earlier["name"]},
            "sha256": earlier.get("sha256"),
            "pipeline": earlier.get("pipeline"),
        }


class ProjectCounts(Contract):
    nodes: int
    edges: int
    spans: int
    chunks: int
    tables: int  # CSVs under tables_prefix, one per TABLE node
    # Pages OCR read and pages without a text layer it left unread (OcrMode off); None
    # where the document had neither (projection.json's stats.ocr).
    ocr_page_count: int | None = None
    unread_pages: list[int] | None = None


class ProjectOutput(StageOutput):
    projection_key: str
    chunks_key: str  # chunks.jsonl, the projection's retrieval chunks
    markdown_key: str  # document.md, the document as Markdown
    # tables/, the CSVs (table-<node id>.csv): a prefix, so the state's data stays small
    # however many tables a document has
    tables_prefix: str
    counts: ProjectCounts


# ---- detect ----------------------------------------------------------------------------------


class DetectInput(StageInput):
    projection_key: str
    clarify: bool = False


class DetectCounts(Contract):
    ambiguities: int
    ambiguities_suppressed: int


class DetectOutput(StageOutput):
    detection_key: str
    counts: DetectCounts
    # The rule set detection ran (richdoc.detection.ruleset); an execution begun before
    # outputs named it ran spec-v1.
    rules: str = "spec-v1"


InputT = TypeVar("InputT", bound=StageInput)
OutputT = TypeVar("OutputT", bound=StageOutput)


# The step Lambdas, by the name their attempt records (and the job's ``stage``) carry.
StepName = Literal["plan", "parse", "merge", "project", "detect"]


# What a step writes to the artifact bucket: the parse artifacts of its bytes, or its run's
# outputs. A step that finds its job deleted once its work is done deletes it
# (``richdoc.deletion``).
Written = Literal["parse_artifacts", "run_outputs"]


@dataclass(frozen=True)
class StageContract(Generic[InputT, OutputT]):
    """A step Lambda's name (its attempt records' ``stage``), input and output, what it
    writes (None: nothing), and whether it is the run's last work (after it, only
    recording is left: the job's progress says so). What its output decides for the job
    is the output's ``decision``; a shard it finished is its input's ``attempt_pages``."""

    name: StepName
    input: type[InputT]
    output: type[OutputT]
    writes: Written | None = None
    last: bool = False


PLAN = StageContract("plan", PlanInput, PlanOutput)
PARSE = StageContract("parse", ParseInput, ParseOutput, writes="parse_artifacts")
MERGE = StageContract("merge", MergeInput, ParseOutput, writes="parse_artifacts")
PROJECT = StageContract("project", ProjectInput, ProjectOutput, writes="run_outputs")
DETECT = StageContract("detect", DetectInput, DetectOutput, writes="run_outputs", last=True)


# ---- what the steps leave for the job record -------------------------------------------------


class StepResults(Contract):
    """``$.results`` once every step ran: what RecordSuccess receives."""

    parse: ParseOutput
    project: ProjectOutput
    detect: DetectOutput


class JobOutputs(Contract):
    """The job record's ``outputs``: where the run's artifacts are."""

    docling_key: str
    projection_key: str
    detection_key: str
    chunks_key: str | None = None  # None in the records of runs made before chunks existed
    # None in the records of runs made before Markdown and table CSVs existed
    markdown_key: str | None = None
    tables_prefix: str | None = None

    @classmethod
    def of(cls, results: StepResults) -> JobOutputs:
        return cls(
            docling_key=results.parse.docling_key,
            projection_key=results.project.projection_key,
            detection_key=results.detect.detection_key,
            chunks_key=results.project.chunks_key,
            markdown_key=results.project.markdown_key,
            tables_prefix=results.project.tables_prefix,
        )

    def files(self) -> dict[str, str]:
        """Each artifact's key by its file name (``OUTPUT_FILES``), in that order (those
        the run wrote)."""
        keys = {file: getattr(self, field) for field, file in OUTPUT_FILES.items()}
        return {file: key for file, key in keys.items() if key is not None}


# What each output is called as a file: ``richdoc run --out DIR`` writes these, the
# console's downloads are named so. With OUTPUT_FOLDERS, one per field of JobOutputs (a
# test holds them equal).
OUTPUT_FILES = {
    "docling_key": "docling.json",
    "projection_key": "projection.json",
    "detection_key": "detection.json",
    "chunks_key": "chunks.jsonl",
    "markdown_key": "document.md",
}
# Outputs that are a folder of files: the table CSVs (richdoc_client.tables).
OUTPUT_FOLDERS = {"tables_prefix": "tables"}


class JobCounts(AbsentOmitted, Contract):
    """The job record's ``counts``."""

    nodes: int
    edges: int
    spans: int
    ambiguities: int
    ambiguities_suppressed: int
    chunks: int | None = None  # None in the records of runs made before chunks existed
    tables: int | None = None  # None in the records of runs made before table CSVs existed
    # As ProjectCounts: None where OCR had no page to read or leave (and in older records),
    # and then absent from every dump: the printed job, like the completion event, says
    # nothing of OCR for a document it had nothing to do with.
    ocr_page_count: int | SkipJsonSchema[None] = None
    unread_pages: list[int] | SkipJsonSchema[None] = None

    @classmethod
    def of(cls, results: StepResults) -> JobCounts:
        project, detect = results.project.counts, results.detect.counts
        return cls(
            nodes=project.nodes,
            edges=project.edges,
            spans=project.spans,
            ambiguities=detect.ambiguities,
            ambiguities_suppressed=detect.ambiguities_suppressed,
            chunks=project.chunks,
            tables=project.tables,
            ocr_page_count=project.ocr_page_count,
            unread_pages=project.unread_pages,
        )


# Where a run failed: the ...Failed Pass states' ``stage`` (a step, or the records
# function's own calls: "start" and "record").
FailedStage = StepName | Literal["start", "record"]
