"""OCR through the real parse worker: the pages without a text layer are read (and only
they, in mode auto), the provenance is recorded on every item OCR read, mode off names
the pages it leaves unread, force reads every page, images are documents, and nothing is
downloaded: the parse runs with the network unreachable.

The documents are one or two short pages made by tests.support.scans (OCR costs seconds
a page); the accuracy sweep is bench item ocr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from docling_core.types.doc import DoclingDocument, PictureItem, TextItem

from richdoc.parse.ocr.engine import EngineLines, page_ocr_options, spaced_line
from richdoc.parse.ocr.mode import MIN_LINE_CONFIDENCE, RENDER_SCALE, OcrMode
from richdoc.parse.ocr.record import document_record, item_transcription
from richdoc.parse.reports import ParseReport
from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
from richdoc.parse.step import ParseWorker, parse_file, shared_worker
from richdoc.taxonomy import UnsupportedFeature
from tests.support import scans
from tests.support.offline import network_unreachable, parse_offline

if TYPE_CHECKING:
    from rapidocr.utils.output import RapidOCROutput

pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

LIMITS = ParseLimits(max_pages=2000, timeout_s=300, mem_ceiling_mb=4096)
NATIVE_LINE = "A native text page: its text layer is kept as it is."
SCANNED_LINES = ("Scanned page of the report.", "Signed on February 14, 2025.")


def _worker(mode: OcrMode) -> ParseWorker:
    return shared_worker(ParserSettings(Pipeline.NATIVE, ocr_mode=mode), quiet=True)


def _parse(
    path: Path, tmp_path: Path, mode: OcrMode = OcrMode.AUTO
) -> tuple[ParseReport, DoclingDocument]:
    out = tmp_path / "out" / f"{path.name}.json"
    report = parse_file(path, out, LIMITS, worker=_worker(mode))
    return report, DoclingDocument.model_validate_json(out.read_bytes())


def _texts(doc: DoclingDocument, page: int) -> list[TextItem]:
    return [t for t in doc.texts if t.prov and t.prov[0].page_no == page]


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in text.lower()).split()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ocr") / "mixed.pdf"
    path.write_bytes(scans.mixed_pdf([("text", [NATIVE_LINE]), ("scan", SCANNED_LINES)]))
    return path


def test_a_mixed_pdf_reads_its_scanned_page_and_keeps_the_text_layer(mixed, tmp_path) -> None:
    report, doc = _parse(mixed, tmp_path)
    assert (report.page_count, report.ocr_pages, report.unread_pages) == (2, [2], [])
    [native] = _texts(doc, 1)
    assert native.text == NATIVE_LINE and item_transcription(native) is None
    scanned = _texts(doc, 2)
    assert _words(" ".join(t.text for t in scanned)) == _words(" ".join(SCANNED_LINES))
    for item in scanned:
        transcription = item_transcription(item)
        assert transcription is not None and 0.5 < transcription.confidence <= 1.0
        assert item.prov[0].bbox.area() > 0
    record = document_record(doc)
    assert record is not None
    assert (record.mode, record.ocr_pages, record.unread_pages) == (OcrMode.AUTO, [2], [])
    assert record.engine.startswith("rapidocr ")


def test_ocr_off_names_the_page_it_did_not_read(mixed, tmp_path) -> None:
    report, doc = _parse(mixed, tmp_path, OcrMode.OFF)
    assert (report.ocr_pages, report.unread_pages) == ([], [2])
    assert [t.text for t in doc.texts] == [NATIVE_LINE]
    record = document_record(doc)
    assert record is not None and (record.ocr_pages, record.unread_pages) == ([], [2])


def test_ocr_off_refuses_a_scan(tmp_path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(scans.scanned_pdf([SCANNED_LINES]))
    with pytest.raises(UnsupportedFeature) as refused:
        _parse(path, tmp_path, OcrMode.OFF)
    assert refused.value.feature == "ocr"


def test_force_reads_the_text_layers_page_too(tmp_path) -> None:
    path = tmp_path / "text.pdf"
    path.write_bytes(scans.typeset([[NATIVE_LINE]]))
    report, doc = _parse(path, tmp_path, OcrMode.FORCE)
    assert report.ocr_pages == [1]
    [item] = doc.texts
    assert _words(item.text) == _words(NATIVE_LINE)
    assert item_transcription(item) is not None


def test_a_text_pdf_is_converted_as_without_ocr(tmp_path) -> None:
    path = tmp_path / "text.pdf"
    path.write_bytes(scans.typeset([[NATIVE_LINE]]))
    report, doc = _parse(path, tmp_path)
    assert report.ocr_pages == [] and document_record(doc) is None
    assert doc.body.meta is None and all(t.meta is None for t in doc.texts)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("scan.png", "PNG"),
        ("scan.jpg", "JPEG"),
        ("scan.tiff", "TIFF"),
        ("scan.bmp", "BMP"),
        ("scan.webp", "WEBP"),
        ("scan.gif", "GIF"),
    ],
)
def test_an_image_is_a_document_read_by_ocr(tmp_path, name, fmt) -> None:
    path = tmp_path / name
    path.write_bytes(scans.image_file([SCANNED_LINES[1:]], fmt))
    report, doc = _parse(path, tmp_path)
    assert (report.format, report.pipeline, report.page_count, report.ocr_pages) == (
        "image",
        Pipeline.NATIVE,
        1,
        [1],
    )
    assert _words(" ".join(t.text for t in doc.texts)) == _words(SCANNED_LINES[1])
    assert all(item_transcription(t) is not None for t in doc.texts)
    assert not any(isinstance(p, PictureItem) for p in doc.pictures)


def test_every_frame_of_a_multi_page_tiff_is_a_page(tmp_path) -> None:
    path = tmp_path / "fax.tiff"
    # Lines of a few words: a two-word line cropped tight is read as two overlapping
    # boxes (docs/parse.md, OCR: "Short lines on tight crops").
    frames = [["Page one of the fax."], ["Page two of the fax."]]
    path.write_bytes(scans.image_file(frames, "TIFF"))
    report, doc = _parse(path, tmp_path)
    assert (report.page_count, report.ocr_pages) == (2, [1, 2])
    read = [_words(" ".join(t.text for t in _texts(doc, page))) for page in (1, 2)]
    assert read == [_words(line) for [line] in frames]


# Offline ----------------------------------------------------------------------------------


@pytest.mark.skipif(network_unreachable() is None, reason="cannot unshare the network here")
def test_ocr_downloads_nothing_it_runs_with_the_network_unreachable(mixed, tmp_path) -> None:
    out = tmp_path / "mixed.json"
    settings = {"RICHDOC_OCR_MODE": "auto", "RICHDOC_PDF_PIPELINE": "native"}
    done = parse_offline(mixed, out, home=tmp_path, settings=settings)
    assert done.returncode == 0, done.stderr[-4000:]
    doc = DoclingDocument.model_validate_json(out.read_bytes())
    assert _words(" ".join(t.text for t in _texts(doc, 2))) == _words(" ".join(SCANNED_LINES))


# What the engine returns, and what is kept ------------------------------------------------


def _engine_output(lines: list[tuple[str, float, float, list[str]]]) -> RapidOCROutput:
    """A RapidOCR answer: per line its text, score, box height (pixels) and words."""
    import numpy as np
    from rapidocr.utils.output import RapidOCROutput

    boxes, words = [], []
    for n, (_, _, height, line_words) in enumerate(lines):
        top = 100.0 * n
        boxes.append([[10.0, top], [400.0, top], [400.0, top + height], [10.0, top + height]])
        words.append(tuple((word, 0.9, [[0, 0], [1, 0], [1, 1], [0, 1]]) for word in line_words))
    return RapidOCROutput(
        boxes=np.array(boxes),
        txts=tuple(line[0] for line in lines),  # type: ignore[arg-type]
        scores=tuple(line[1] for line in lines),  # type: ignore[arg-type]
        word_results=tuple(words),  # type: ignore[arg-type]
    )


def test_lines_too_small_to_be_text_are_dropped_and_words_are_spaced_as_the_engine_parts_them():
    from rapidocr.utils.output import RapidOCROutput

    answer = _engine_output(
        [
            ("1.Term of the agreement", 0.99, 40.0, ["1.", "Term", "of", "the", "agreement"]),
            ("a", 0.9, 6.0, ["a"]),  # 2 points tall at 3 pixels a point: noise
            ("February15, 2025", 0.98, 40.0, ["February", "15,", "2025"]),
        ]
    )
    kept = EngineLines(lambda image, **options: answer, lambda: RENDER_SCALE)(b"")
    assert isinstance(kept, RapidOCROutput)
    assert kept.boxes is not None and kept.scores is not None and kept.word_results is not None
    # rapidocr annotates its tuples of any length as 1-tuples.
    assert kept.txts == ("1. Term of the agreement", "February 15, 2025")  # type: ignore[comparison-overlap]
    assert len(kept.boxes) == len(kept.scores) == len(kept.word_results) == 2
    # Nothing left is what the engine answers when it finds nothing.
    only_noise = _engine_output([("a", 0.9, 6.0, ["a"])])
    empty = EngineLines(lambda image, **options: only_noise, lambda: RENDER_SCALE)(b"")
    assert isinstance(empty, RapidOCROutput)
    assert empty.txts is None and empty.boxes is None


def test_the_engine_drops_unsure_lines_itself():
    options = page_ocr_options()
    assert options.text_score == MIN_LINE_CONFIDENCE  # RapidOCR's own filter
    assert options.rapidocr_params == {"Global.return_word_box": True}


@pytest.mark.parametrize(
    ("text", "words", "spaced"),
    [
        (
            "3.Notices to12 Main St",
            ["3.", "Notices", "to", "12", "Main", "St"],
            "3. Notices to 12 Main St",
        ),
        ("already spaced", ["already", "spaced"], "already spaced"),
        # Wide characters are set without spaces; the engine parts a script change too.
        ("价格100元", ["价格", "100", "元"], "价格100元"),
        ("Term", [], "Term"),  # no words: the text as it is
        ("Teim", ["Term"], "Teim"),  # words that are not the text's: the text
    ],
)
def test_a_space_goes_where_the_engines_words_part_and_the_text_has_none(text, words, spaced):
    assert spaced_line(text, [(word, 0.9, []) for word in words]) == spaced


def test_ocr_keeps_the_space_the_recogniser_drops_where_the_engines_boxes_show_it(tmp_path):
    # Courier at 11 points scanned at 150 dpi: the recogniser reads "2024until"; the
    # engine's word boxes part the two words.
    line = "Effective 1 March 2024 until 28 February 2026."
    path = tmp_path / "scan.pdf"
    path.write_bytes(scans.scanned_pdf([[line]], dpi=150, font="Courier", font_size=11))
    _, doc = _parse(path, tmp_path)
    assert [t.text for t in doc.texts] == [line]


NOTHING_READABLE = {
    "a picture": ("picture.png", scans.picture_png),
    "a drawing": ("drawing.pdf", scans.drawing_pdf),
    "a fax OCR cannot read": ("fax.pdf", None),
}


@pytest.mark.parametrize("case", NOTHING_READABLE)
def test_a_document_with_nothing_readable_is_unsupported_pictures_in_richdoc_parse(
    tmp_path, capsys, case
):
    from richdoc_tools.cli import main

    from tests.support import damaged_inputs

    name, make = NOTHING_READABLE[case]
    path = tmp_path / name
    if make is None:
        damaged_inputs.ccitt_pdf(path)
    else:
        path.write_bytes(make())
    assert main(["parse", str(path), "-o", str(tmp_path / "out.json")]) == 20
    [line] = capsys.readouterr().err.splitlines()
    failure = json.loads(line)
    assert (failure["kind"], failure["feature"]) == ("unsupported_feature", "pictures")
    assert failure["reason"].startswith("nothing readable: OCR read page(s) 1 and found no text")
    assert not (tmp_path / "out.json").exists()
