"""Scanned and mixed PDFs and images through the real state machine on the embedded stack,
with the template's default parameters (OcrMode auto): a scanned contract comes out
SUCCEEDED with its conflicting dates found in the OCR'd sentences, every node on its page
with its box and its OCR provenance, and the job record, manifest and completion event
say how many pages OCR read; every image format succeeds and hostile images get their
kinds. With OcrMode off, a mixed PDF names the page it left unread in projection.json's
stats, the job record, the event and the manifest, and a scan is dead-lettered as
unsupported_feature ``ocr``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from richdoc.jobs import JobStatus
from richdoc_client.chunks import Chunk
from richdoc_client.detection import AmbiguityKind, Detection
from richdoc_client.projection import DocumentNode, SectionNode, block_text
from richdoc_client.reader import ResultsReader
from tests.support import scans
from tests.support.ocr_runs import (
    NATIVE_LINE,
    SCANNED_LINES,
    Subscription,
    ended,
    manifest_of,
    projection_of,
    read,
    words,
)
from tests.support.stack_runs import upload

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]


@pytest.fixture
def subscription(stack: Any) -> Iterator[Subscription]:
    subscribed = Subscription(stack, "ocr-e2e")
    yield subscribed
    subscribed.close()


def _holds(text: str, line: str) -> bool:
    """Whether ``text`` holds ``line``'s words, in order and together (spacing aside: OCR
    may run a heading's words together)."""
    return "".join(words(line)) in "".join(words(text))


def test_a_scanned_contract_succeeds_with_its_conflicting_dates_found_in_the_ocr_text(
    stack: Any, subscription: Subscription
) -> None:
    body = scans.scanned_pdf(scans.CONTRACT_PAGES)
    key = "scans/contract.pdf"
    clarify = {"richdoc-clarify": "true"}  # ambiguities are reported, not only counted
    job_id = stack.upload(Path(key), key=key, body=body, metadata=clarify).job_id
    [job] = ended(stack, [job_id]).values()
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.counts is not None and job.counts.ocr_page_count == 2
    assert job.counts.unread_pages == []

    projection = projection_of(stack, job)
    assert projection.stats.ocr is not None
    assert (projection.stats.ocr.mode, projection.stats.ocr.ocr_pages) == ("auto", [1, 2])
    blocks = [node for node in projection.nodes if not isinstance(node, DocumentNode)]
    # The title, one line at the top of page 1 in the body's type, is what CDLA reads as a
    # running header; on the first page, above the body and on no other page, it is the
    # document's title: its first section.
    title, *lines = [line for page in scans.CONTRACT_PAGES for line in page]
    assert isinstance(blocks[0], SectionNode) and _holds(blocks[0].props.title, title)
    # Paragraphs, not lines: each line of the body lies whole inside one block.
    assert len(blocks) < len(lines)
    for line in lines:
        assert sum(_holds(block_text(node) or "", line) for node in blocks) == 1, line
    read_text = " ".join(block_text(node) or "" for node in blocks)
    assert projection.stats.ocr.words == len(read_text.split())
    # Every character read (spacing aside: OCR may run words together).
    every_line = [title, *lines]
    assert "".join(words(read_text)) == "".join(w for line in every_line for w in words(line))
    for node in blocks:
        props = node.props
        assert props.page in (1, 2) and props.bbox is not None, node
        assert props.ocr is not None and 0.5 < props.ocr.confidence <= 1, node
    assert all(span.ocr_confidence is not None for span in projection.spans)

    assert job.outputs is not None
    detection = Detection.model_validate_json(read(stack, job.outputs.detection_key))
    [ambiguity] = detection.ambiguities
    assert ambiguity.kind is AmbiguityKind.CONFLICTING_DATES
    found: dict[str, tuple[str, int | None, float | None]] = {}
    text = projection.canonical_text.encode()
    for candidate in ambiguity.candidates:
        assert candidate.spanRef is not None
        span = projection.spans[candidate.spanRef]
        evidence = projection.nodes[span.node]
        assert not isinstance(evidence, DocumentNode)
        sentence = text[span.start : span.end].decode()
        found[candidate.label] = (sentence, evidence.props.page, span.ocr_confidence)
    # contracts-v2's roles: the preamble's effective date, and the date the agreement says
    # it was signed on (which, stated, makes the preamble's date the effective date alone).
    effective = found["2024-03-01 (effective date)"]
    signed = found["2025-02-14 (agreement date)"]
    assert _holds(effective[0], scans.CONTRACT_PAGES[0][1])
    assert _holds(signed[0], scans.CONTRACT_PAGES[1][1])
    assert (effective[1], signed[1]) == (1, 2)
    assert effective[2] is not None and signed[2] is not None  # the evidence is OCR'd text

    chunks = [
        Chunk.model_validate_json(line)
        for line in read(stack, job.outputs.chunks_key or "").splitlines()
    ]
    assert chunks and all(chunk.ocr_confidence is not None for chunk in chunks)
    [event] = subscription.of(job.job_id)
    detail = event.detail
    assert detail.counts is not None and detail.outputs is not None and detail.current
    assert (detail.counts.ocr_page_count, detail.counts.unread_pages) == (2, [])
    # The manifest names the same run, its outputs kept with the document, and its counts.
    manifest = manifest_of(stack, job)
    assert manifest.result is not None and manifest.result.outputs == detail.outputs
    assert manifest.result.counts == detail.counts
    kept = f"documents/{detail.document_id}/{job.job_id}/run-001/"
    assert detail.outputs.projection_key == f"{kept}projection.json"
    # The document as Markdown, as the reader serves it: the text OCR read, and nothing
    # of the parse's records (the confidences, the engine).
    reader = ResultsReader.s3(stack.outputs["ArtifactBucketName"], client=stack.client("s3"))
    markdown = reader.markdown(manifest)
    assert words(markdown.replace("<!-- page break -->", "").replace("<!-- image -->", "")) == (
        words(read_text)
    )
    assert "confidence" not in markdown and "rapidocr" not in markdown


def test_a_mixed_pdf_reads_its_scanned_page_and_keeps_the_native_one(stack: Any) -> None:
    body = scans.mixed_pdf([("text", [NATIVE_LINE]), ("scan", SCANNED_LINES)])
    [job] = ended(stack, [upload(stack, "scans/mixed.pdf", body)]).values()
    assert job.status is JobStatus.SUCCEEDED, job.failure
    projection = projection_of(stack, job)
    by_page = {
        page: [
            n for n in projection.nodes if not isinstance(n, DocumentNode) and n.props.page == page
        ]
        for page in (1, 2)
    }
    [native] = by_page[1]
    assert native.props.ocr is None and block_text(native) == NATIVE_LINE
    assert by_page[2] and all(node.props.ocr is not None for node in by_page[2])
    assert projection.stats.ocr is not None and projection.stats.ocr.ocr_pages == [2]
    assert job.counts is not None and job.counts.ocr_page_count == 1


IMAGE_FORMATS = {
    "png": "PNG",
    "jpg": "JPEG",
    "tiff": "TIFF",
    "bmp": "BMP",
    "webp": "WEBP",
    "gif": "GIF",
}


def test_every_image_format_succeeds_through_the_state_machine(stack: Any) -> None:
    line = "Invoice dated March 3, 2024."
    uploads = {
        ext: upload(stack, f"images/invoice.{ext}", scans.image_file([[line]], fmt))
        for ext, fmt in IMAGE_FORMATS.items()
    }
    jobs = ended(stack, list(uploads.values()))
    for ext, job_id in uploads.items():
        job = jobs[job_id]
        assert job.status is JobStatus.SUCCEEDED, (ext, job.failure)
        assert job.pipeline == "light" and job.counts is not None and job.counts.ocr_page_count == 1
        projection = projection_of(stack, job)
        nodes = [n for n in projection.nodes if not isinstance(n, DocumentNode)]
        assert words(projection.canonical_text) == words(line), ext
        for node in nodes:
            assert node.props.ocr is not None and node.props.page == 1 and node.props.bbox


def test_a_document_with_nothing_readable_is_dead_lettered_as_pictures_at_its_parse(
    stack: Any, tmp_path: Path
) -> None:
    """A picture, a drawing and a fax OCR cannot read: one outcome, whatever the engine
    found in each (nothing, or noise it dropped), never an empty or noise success."""
    from tests.support import damaged_inputs

    uploads = {
        "picture": upload(stack, "nothing/picture.png", scans.picture_png()),
        "drawing": upload(stack, "nothing/drawing.pdf", scans.drawing_pdf()),
        "fax": upload(
            stack, "nothing/fax.pdf", damaged_inputs.ccitt_pdf(tmp_path / "fax.pdf").read_bytes()
        ),
    }
    jobs = ended(stack, list(uploads.values()))
    for case, job_id in uploads.items():
        job = jobs[job_id]
        assert job.status is JobStatus.DEAD_LETTERED, (case, job.status)
        assert job.failure is not None
        assert (job.failure.kind, job.failure.feature) == ("unsupported_feature", "pictures")
        assert job.failure.reason.startswith("nothing readable"), (case, job.failure.reason)
        attempts = stack.jobs.attempts.of_job(job_id)
        assert [(a.stage, a.outcome) for a in attempts][-1] == ("parse", "UnsupportedFeature")


def test_hostile_images_are_dead_lettered_with_their_kinds(stack: Any, tmp_path: Any) -> None:
    from tests.unit.test_image_inspection import HOSTILE

    uploads = {
        case: upload(stack, f"hostile/{n}.png", make(tmp_path / f"{n}.png").read_bytes())
        for n, (case, (make, _)) in enumerate(HOSTILE.items())
    }
    jobs = ended(stack, list(uploads.values()))
    for case, job_id in uploads.items():
        job = jobs[job_id]
        assert job.status is JobStatus.DEAD_LETTERED, case
        assert job.failure is not None and job.failure.kind == "corrupt_input", (case, job.failure)
