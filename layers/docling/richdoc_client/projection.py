"""The model of ``projection.json`` (schema ``richdoc.projection/v1``).

The graph of one document: nodes (DOCUMENT, SECTION, PARAGRAPH, TABLE, TABLE_ROW), each
with the properties of its label, ``CONTAINS`` edges, the canonical text and UTF-8 byte
spans into it, and counts. docs/projection.md is the contract; ``richdoc.projection``
builds it from a DoclingDocument.

Props that docling gives no value for (``page`` and ``bbox`` without provenance, a
DOCUMENT without a title, ...) are absent from the file, never ``null``. So is the OCR
provenance of text that was not read by OCR (a node's ``ocr``, a span's
``ocr_confidence``, ``stats.ocr``): members added in version 1.1, which files written
before them never have.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Annotated, Final, Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from richdoc_client.versions import SchemaVersion, Versioned, since
from richdoc_client.wire import AbsentOmitted, WireModel

SCHEMA: Final = "richdoc.projection/v1"
VERSION: Final = "1.1"  # richdoc_client.versions: how it may change


class NodeLabel(StrEnum):
    DOCUMENT = "DOCUMENT"
    SECTION = "SECTION"
    PARAGRAPH = "PARAGRAPH"
    TABLE = "TABLE"
    TABLE_ROW = "TABLE_ROW"


class SpanKind(StrEnum):
    """What kind of block a span covers (the ``kind`` of a span)."""

    TITLE = "title"
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    CAPTION = "caption"
    CODE = "code"
    TABLE_ROW = "table_row"


class SkippedFeature(StrEnum):
    """Content the v1 feature matrix does not project (docs/projection.md, "Feature matrix v1").

    The value is both the key in ``stats.skipped_features`` and the feature tag of the
    ``UnsupportedFeature`` raised when such content is all a document has.
    """

    PICTURES = "pictures"
    FORMULAS = "formulas"
    FOOTNOTES = "footnotes"
    FORMS = "forms"


class NotProjected(StrEnum):
    """Deliberate omissions that are not features: counted in ``stats.not_projected``."""

    EMPTY_BLOCKS = "empty_blocks"  # text blocks whose text is empty or whitespace only
    EMPTY_ROWS = "empty_rows"  # table rows whose every cell is empty
    FURNITURE = "furniture"  # page headers/footers (furniture layer or label)
    NOTES = "notes"  # speaker notes, comments
    BACKGROUND = "background"  # watermarks
    INVISIBLE = "invisible"  # hidden text
    MARKERS = "markers"  # stand-alone list/footnote markers
    UNKNOWN = "unknown"  # item kinds this version does not know


# A value that is absent from the file when unknown (never written as null).
Page = Annotated[int, Field(ge=1)]
#: ``[x0, y0, x1, y1]``, top-left origin, in the page's own units.
BBox = Annotated[list[float], Field(min_length=4, max_length=4)]
#: An OCR engine's confidence in text it read, 0 to 1 (the mean of its lines' scores).
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class ProjectionSource(WireModel):
    """``source``: what the projection was made from (these members are always written)."""

    name: str  # the uploaded object's key in the pipeline
    sha256: str | None = None  # of the source bytes
    pipeline: str | None = None  # the docling pipeline that parsed it


# ---- node props, one model per label -----------------------------------------------------


class OcrProvenance(WireModel):
    """A node's ``ocr``: its text was read by OCR from its page's image (a scan), not
    taken from a text layer."""

    confidence: Confidence  # the engine's


class _Located(AbsentOmitted, WireModel):
    page: Page | SkipJsonSchema[None] = None  # the page of docling's first provenance entry
    bbox: BBox | SkipJsonSchema[None] = None  # encloses its entries on that page
    # Set only for text OCR read.
    ocr: OcrProvenance | SkipJsonSchema[None] = Field(default=None, json_schema_extra=since("1.1"))


class DocumentProps(AbsentOmitted, WireModel):
    name: str  # as source.name
    title: str | SkipJsonSchema[None] = None  # the first title's text, when there is one


class SectionProps(_Located):
    title: str  # the heading's text (its span's slice)
    level: Annotated[int, Field(ge=0)]  # 0 for a title, else docling's heading level


class ParagraphProps(_Located):
    text: str  # the block's text (its span's slice)
    list_level: Annotated[int, Field(ge=1)] | SkipJsonSchema[None] = None  # list items only
    marker: str | SkipJsonSchema[None] = None  # a list item's marker, when docling gives one


class TableProps(_Located):
    columns: list[str]  # the row keys, in column order
    header_rows: Annotated[int, Field(ge=0)]


class TableRowProps(_Located):
    cells: dict[str, str]  # one value per column key
    row: Annotated[int, Field(ge=0)]  # the row's index in docling's grid (header rows count)
    text: str  # the row's text (its span's slice)


# ---- nodes, edges, spans -----------------------------------------------------------------


class _Node(WireModel):
    id: Annotated[int, Field(ge=0)]


class DocumentNode(_Node):
    label: Literal[NodeLabel.DOCUMENT] = NodeLabel.DOCUMENT
    props: DocumentProps


class SectionNode(_Node):
    label: Literal[NodeLabel.SECTION] = NodeLabel.SECTION
    props: SectionProps


class ParagraphNode(_Node):
    label: Literal[NodeLabel.PARAGRAPH] = NodeLabel.PARAGRAPH
    props: ParagraphProps


class TableNode(_Node):
    label: Literal[NodeLabel.TABLE] = NodeLabel.TABLE
    props: TableProps


class TableRowNode(_Node):
    label: Literal[NodeLabel.TABLE_ROW] = NodeLabel.TABLE_ROW
    props: TableRowProps


Node = Annotated[
    DocumentNode | SectionNode | ParagraphNode | TableNode | TableRowNode,
    Field(discriminator="label"),
]
# The nodes whose block text has a span, and the prop that holds that text.
BlockNode = SectionNode | ParagraphNode | TableRowNode


def block_text(node: Node) -> str | None:
    """The text a node's span covers: a section's title, a paragraph's or row's text."""
    if isinstance(node, SectionNode):
        return node.props.title
    if isinstance(node, ParagraphNode | TableRowNode):
        return node.props.text
    return None


class Edge(WireModel):
    src: Annotated[int, Field(ge=0)]
    dst: Annotated[int, Field(ge=0)]
    label: Literal["CONTAINS"] = "CONTAINS"
    ord: Annotated[int, Field(ge=0)]  # position among the parent's children


class Span(AbsentOmitted, WireModel):
    node: Annotated[int, Field(ge=0)]
    start: Annotated[int, Field(ge=0)]  # UTF-8 byte offset into canonical_text
    end: Annotated[int, Field(ge=0)]
    kind: SpanKind
    # The OCR engine's confidence in the span's text, for a node OCR read; absent otherwise.
    ocr_confidence: Confidence | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=since("1.1")
    )


# ---- stats -------------------------------------------------------------------------------


class SkippedFeatureWarning(WireModel):
    code: Literal["skipped_feature"] = "skipped_feature"
    feature: SkippedFeature
    count: Annotated[int, Field(ge=1)]
    message: str


class EmptyDocumentWarning(WireModel):
    code: Literal["empty_document"] = "empty_document"
    message: str


StatsWarning = Annotated[SkippedFeatureWarning | EmptyDocumentWarning, Field(discriminator="code")]


class OcrStats(WireModel):
    """``stats.ocr``: what OCR did to the document (present when it had pages without a
    text layer, or OCR was forced)."""

    engine: str  # e.g. "rapidocr 3.10.0 (PP-OCRv6)"
    mode: Literal["auto", "off", "force"]  # the deployment's OcrMode
    ocr_pages: list[Page]  # the pages OCR read, ascending
    unread_pages: list[Page]  # pages without a text layer left unread (OcrMode off)
    words: Annotated[int, Field(ge=0)]  # whitespace-separated words of the OCR'd nodes' text


class ProjectionStats(AbsentOmitted, WireModel):
    """``stats``: every key is always present, every label, kind and feature counted;
    ``ocr`` only where OCR had pages to read (added in 1.1)."""

    canonical_text_bytes: Annotated[int, Field(ge=0)]
    edges: Annotated[int, Field(ge=0)]
    empty_document: bool
    nodes: Annotated[int, Field(ge=1)]
    nodes_by_label: dict[NodeLabel, int]
    not_projected: dict[NotProjected, int]
    skipped_features: dict[SkippedFeature, int]
    spans: Annotated[int, Field(ge=0)]
    spans_by_kind: dict[SpanKind, int]
    warnings: list[StatsWarning]
    ocr: OcrStats | SkipJsonSchema[None] = Field(default=None, json_schema_extra=since("1.1"))

    @classmethod
    def of_graph(
        cls,
        nodes: Sequence[Node],
        edges: Sequence[Edge],
        spans: Sequence[Span],
        canonical_text: str,
    ) -> ProjectionStats:
        """The stats of a graph built by hand (tests, synthetic documents): its counts,
        nothing skipped or left out. The projection step counts as it walks instead."""
        by_label = dict.fromkeys(NodeLabel, 0)
        for node in nodes:
            by_label[node.label] += 1
        by_kind = dict.fromkeys(SpanKind, 0)
        for span in spans:
            by_kind[span.kind] += 1
        empty = len(nodes) == 1
        return cls(
            canonical_text_bytes=len(canonical_text.encode("utf-8")),
            edges=len(edges),
            empty_document=empty,
            nodes=len(nodes),
            nodes_by_label=by_label,
            not_projected=dict.fromkeys(NotProjected, 0),
            skipped_features=dict.fromkeys(SkippedFeature, 0),
            spans=len(spans),
            spans_by_kind=by_kind,
            warnings=[EmptyDocumentWarning(message="the document has no content")] if empty else [],
        )


# ---- the document ------------------------------------------------------------------------


class Projection(Versioned, WireModel):
    model_config = ConfigDict(populate_by_name=True)

    schema_: Literal["richdoc.projection/v1"] = Field(default=SCHEMA, alias="schema")
    schema_version: SchemaVersion = Field(default=VERSION, json_schema_extra=since("1.1"))
    source: ProjectionSource
    canonical_text: str
    nodes: list[Node]
    edges: list[Edge]
    spans: list[Span]
    stats: ProjectionStats

    def to_json_bytes(self) -> bytes:
        """Canonical serialization: sorted keys, UTF-8, fixed layout, trailing newline.

        Layout: one top-level member per line, and one node, edge or span per line (so
        golden files diff line by line); every other value is compact, as
        ``json.dumps(sort_keys=True, ensure_ascii=False)`` writes it, with absent props
        left out. Built line by line because ``json.dumps(indent=...)`` falls back to the
        pure Python encoder, which alone took longer than the whole projection. Edges and
        spans hold only integers, one string and a span's optional confidence, so they
        are formatted directly.
        """
        encode = _ENCODER.encode
        edges = (
            f'{{"dst": {e.dst}, "label": {_string(e.label)}, "ord": {e.ord}, "src": {e.src}}}'
            for e in self.edges
        )
        spans = (
            f'{{"end": {s.end}, "kind": {_string(s.kind.value)}, "node": {s.node}, '
            f"{_ocr_confidence(s.ocr_confidence)}"
            f'"start": {s.start}}}'
            for s in self.spans
        )
        nodes = (
            f'{{"id": {n.id}, "label": {_string(n.label.value)}, '
            f'"props": {encode(n.props.model_dump())}}}'
            for n in self.nodes
        )
        members = {
            "canonical_text": _string(self.canonical_text),
            "edges": _json_array(edges),
            "nodes": _json_array(nodes),
            "schema": _string(self.schema_),
            "schema_version": _string(self.schema_version),
            "source": encode(self.source.model_dump(mode="json")),
            "spans": _json_array(spans),
            "stats": encode(self.stats.model_dump(mode="json")),
        }
        lines = ",\n".join(f" {_string(key)}: {value}" for key, value in sorted(members.items()))
        return ("{\n" + lines + "\n}\n").encode("utf-8")


_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)
_string = _ENCODER.encode  # a JSON string literal, exactly as inside any other value


def _ocr_confidence(value: float | None) -> str:
    """A span's ``ocr_confidence`` member and its separator (in sorted place), or nothing."""
    return "" if value is None else f'"ocr_confidence": {_ENCODER.encode(value)}, '


def _json_array(items: Iterable[str]) -> str:
    body = ",\n  ".join(items)
    return f"[\n  {body}\n ]" if body else "[]"
