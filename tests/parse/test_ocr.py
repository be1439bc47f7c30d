"""OCR through the real parse worker: the pages without a text layer are read (and only
they, in mode auto), the provenance is recorded on every item OCR read, mode off names
the pages it leaves unread, force reads every page, images are documents, and nothing is
downloaded: the parse runs with the network unreachable.

The documents are one or two short pages made by tests.support.scans (OCR costs seconds
a page); the accuracy sweep is bench item ocr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from docling_core.types.doc import DoclingDocument, PictureItem, TextItem

from richdoc.parse.ocr import OcrMode, document_record, item_transcription
from richdoc.parse.reports import ParseReport
from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
from richdoc.parse.step import ParseWorker, parse_file, shared_worker
from richdoc.taxonomy import UnsupportedFeature
from tests.support import scans
from tests.support.cli_process import RICHDOC
from tests.support.offline import network_unreachable
from tests.support.paths import ROOT

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
    prefix = network_unreachable()
    assert prefix is not None
    out = tmp_path / "mixed.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("layers/docling", "tools", ".")),
        "RICHDOC_OCR_MODE": "auto",
        "RICHDOC_PDF_PIPELINE": "native",
        "HOME": str(tmp_path),  # no model cached from an earlier run can answer
        "XDG_CACHE_HOME": str(tmp_path / ".cache"),
    }
    # A documentation address (RFC 5737): in the namespace no route leads anywhere.
    probe = (
        "import errno, socket\n"
        "try: socket.create_connection(('192.0.2.1', 443), timeout=5)\n"
        "except OSError as e: print(e.errno == errno.ENETUNREACH)"
    )
    offline = subprocess.run(
        [*prefix, sys.executable, "-c", probe], env=env, capture_output=True, text=True
    )
    assert offline.stdout.strip() == "True", offline.stderr
    done = subprocess.run(
        [*prefix, *RICHDOC, "parse", str(mixed), "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    doc = DoclingDocument.model_validate_json(out.read_bytes())
    assert _words(" ".join(t.text for t in _texts(doc, 2))) == _words(" ".join(SCANNED_LINES))
