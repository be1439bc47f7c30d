"""The document with its graph: for a PDF its pages, rendered here, with every node's box
drawn over them (click one: its text and its span in the canonical text), and the
temporal ambiguities where their evidence lies, beside why detection found them (every
date mention with its form, role and reason, as ``richdoc detect --explain`` prints
them, under the rule set detection.json names); for other formats the structure tree
beside the canonical text. Read from the job's projection.json and detection.json.
"""

from __future__ import annotations

import functools

from flask import Blueprint, abort, current_app, url_for
from pydantic import BaseModel
from werkzeug.wrappers import Response

from richdoc.detection import Detection
from richdoc.detection.explain import EventExplained, Explanation, MentionExplained, explain
from richdoc.detection.ruleset import DetectionRules
from richdoc.formats import DocFormat, format_of
from richdoc.graph import Projection
from richdoc.taxonomy import UnsupportedFeature
from richdoc_tools.console.forms import job_or_abort
from richdoc_tools.console.overlay import Overlay, overlay
from richdoc_tools.console.rendering import PageRenderer
from richdoc_tools.console.settings import settings
from richdoc_tools.console.summaries import JobSummary
from richdoc_tools.console.twins import page
from richdoc_tools.ops import objects

blueprint = Blueprint("document", __name__)

RENDERER = "richdoc_console_pages"


class MentionRow(BaseModel):
    """A date mention of the explanation, with the node whose block holds it."""

    node: int | None
    mention: MentionExplained


class EventRow(BaseModel):
    node: int | None
    event: EventExplained


class ExplanationView(BaseModel):
    rules: str
    fired: list[str]
    slash_dates: str | None
    mentions: list[MentionRow]
    events: list[EventRow]

    @classmethod
    def of(cls, explained: Explanation, projection: Projection) -> ExplanationView:
        def node(span_ref: int) -> int | None:
            spans = projection.spans
            return spans[span_ref].node if 0 <= span_ref < len(spans) else None

        return cls(
            rules=explained.rules,
            fired=explained.fired,
            slash_dates=explained.slash_dates,
            mentions=[MentionRow(node=node(m.span_ref), mention=m) for m in explained.mentions],
            events=[EventRow(node=node(e.span_ref), event=e) for e in explained.events],
        )


class DocumentView(BaseModel):
    job: JobSummary
    name: str
    format: str
    rendered: bool  # pages drawn (a PDF), or the structure tree only
    job_url: str
    graph: Overlay
    # Why detection found what it found; None under a rule set this console does not know.
    explanation: ExplanationView | None


def renderer() -> PageRenderer:
    """The application's page renderer (made on first use)."""
    made: PageRenderer | None = current_app.extensions.get(RENDERER)
    if made is None:
        made = current_app.extensions[RENDERER] = PageRenderer(
            functools.partial(objects.source, settings().operator)
        )
    return made


@page(blueprint, "/jobs/<job_id>/document", "document.html")
def document_page(job_id: str) -> DocumentView:
    operator = settings().operator
    job = job_or_abort(job_id)
    if job.outputs is None:
        abort(404, "the job has no graph: only a job that succeeded has one")
    projection = Projection.model_validate_json(
        objects.artifact(operator, job.outputs.projection_key)
    )
    detection = Detection.model_validate_json(objects.artifact(operator, job.outputs.detection_key))
    kind = _format(job.source.key)
    sizes = renderer().sizes(job.source) if kind is DocFormat.PDF else []
    graph = overlay(
        projection,
        detection,
        sizes,
        lambda number: url_for("document.page_image", job_id=job.job_id, number=number),
    )
    return DocumentView(
        job=JobSummary.of(job),
        name=job.source.key,
        format=str(kind) if kind else "unknown",
        rendered=bool(sizes),
        job_url=url_for("job.job_page", job_id=job.job_id),
        graph=graph,
        explanation=_explanation(projection, detection),
    )


def _explanation(projection: Projection, detection: Detection) -> ExplanationView | None:
    """The explanation under the rule set that ran (a later rule set: none)."""
    try:
        rules = DetectionRules(detection.rules)
    except ValueError:
        return None
    return ExplanationView.of(explain(projection, rules), projection)


@blueprint.get("/jobs/<job_id>/document/pages/<int:number>.png")
def page_image(job_id: str, number: int) -> Response:
    job = job_or_abort(job_id)
    if _format(job.source.key) is not DocFormat.PDF:
        abort(404, "only a PDF's pages are rendered")
    try:
        png = renderer().png(job.source, number)
    except IndexError as exc:
        abort(404, str(exc))
    return Response(png, mimetype="image/png")


def _format(key: str) -> DocFormat | None:
    try:
        return format_of(key)
    except UnsupportedFeature:  # an extension richdoc does not take
        return None
