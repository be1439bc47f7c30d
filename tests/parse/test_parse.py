"""The parse step with real docling: every supported format converts, every failure
class is typed, the worker survives resource limits, and output is deterministic."""

from __future__ import annotations

import shutil
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from docling_core.types.doc import DoclingDocument

from richdoc.formats import DocFormat
from richdoc.parse.classify import conversion_error
from richdoc.parse.convert import build_converters, set_document_timeout
from richdoc.parse.reports import ParseReport
from richdoc.parse.settings import (
    LAYOUT_MODEL_DIR,
    TABLE_MODEL_DIR,
    ParseLimits,
    ParserSettings,
    Pipeline,
)
from richdoc.parse.step import ParseWorker, parse_file, shared_worker
from richdoc.taxonomy import (
    CorruptInput,
    FailureKind,
    InternalError,
    PipelineError,
    ResourceLimit,
    UnsupportedFeature,
    kind_of_exit_code,
)
from tests.support import parse_inputs

# One zygote per test process: keep the docling tests in one xdist worker.
pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

LIMITS = ParseLimits(max_pages=2000, timeout_s=120, mem_ceiling_mb=4096)


@pytest.fixture(scope="session")
def worker():
    return shared_worker(ParserSettings(Pipeline.NATIVE), quiet=True)


def _parse(worker, path, tmp_path, limits=LIMITS, **kwargs):
    out = tmp_path / "out" / (path.name + ".json")
    report = parse_file(path, out, limits, worker=worker, **kwargs)
    return report, DoclingDocument.model_validate_json(out.read_bytes())


@pytest.mark.parametrize(
    ("make", "name", "pipeline", "pages", "text"),
    [
        (parse_inputs.docx, "contract.docx", Pipeline.SIMPLE, 0, "Master services agreement"),
        (parse_inputs.pptx, "deck.pptx", Pipeline.SIMPLE, 3, "Slide 2"),
        (parse_inputs.xlsx, "book.xlsx", Pipeline.SIMPLE, 2, "item 3"),
        (parse_inputs.html, "notice.html", Pipeline.SIMPLE, 0, "effective from 2024-03-01"),
        (parse_inputs.html, "notice.htm", Pipeline.SIMPLE, 0, "effective from 2024-03-01"),
        (parse_inputs.markdown, "notice.md", Pipeline.SIMPLE, 0, "Terms"),
        (parse_inputs.pdf, "scan.pdf", Pipeline.NATIVE, 3, "Section 2"),
    ],
)
def test_each_supported_format_converts_to_a_docling_document(
    worker, tmp_path, make, name, pipeline, pages, text
):
    report, doc = _parse(worker, make(tmp_path / name), tmp_path)
    assert (report.pipeline, report.page_count, report.partial, report.failed_pages) == (
        pipeline,
        pages,
        False,
        [],
    )
    assert text in doc.export_to_markdown()
    assert report.peak_rss_mb and report.peak_rss_mb > 0


def test_pdf_text_keeps_page_and_bbox_provenance(worker, tmp_path):
    _, doc = _parse(worker, parse_inputs.pdf(tmp_path / "a.pdf", pages=2), tmp_path)
    assert {prov.page_no for text in doc.texts for prov in text.prov} == {1, 2}


@pytest.mark.parametrize("make", [parse_inputs.docx, parse_inputs.pdf, parse_inputs.pptx])
def test_the_same_bytes_give_identical_json_whatever_the_file_is_called(worker, tmp_path, make):
    original = make(tmp_path / f"first.{make.__name__}")
    renamed = _copied(original, tmp_path / f"renamed-copy.{make.__name__}")
    first = parse_file(original, tmp_path / "1.json", LIMITS, worker=worker)
    second = parse_file(renamed, tmp_path / "2.json", LIMITS, worker=worker)
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()
    assert first.sha256 == second.sha256 and first.contract == second.contract


def _empty(path):
    path.write_bytes(b"")
    return path


def _copied(source, path):
    shutil.copy(source, path)
    return path


def _docx_docling_cannot_read(path):
    # Passes inspection (a ZIP with content types, no DTD) but has no package relations.
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        archive.writestr("word/document.xml", "<w:document/>")
    return path


# name -> (make the input in a folder, the error raised, the feature tag)
FAILURES: dict[str, tuple[Callable[[Path], Path], type[PipelineError], str | None]] = {
    "random bytes": (lambda p: parse_inputs.random_bytes(p / "x.docx"), CorruptInput, None),
    "zero bytes": (lambda p: _empty(p / "x.pdf"), CorruptInput, None),
    "truncated docx": (
        lambda p: parse_inputs.truncated(p / "t.docx", parse_inputs.docx(p / "w.docx")),
        CorruptInput,
        None,
    ),
    "truncated pdf": (
        lambda p: parse_inputs.truncated(p / "t.pdf", parse_inputs.pdf(p / "w.pdf")),
        CorruptInput,
        None,
    ),
    "wrong magic": (
        lambda p: _copied(parse_inputs.pdf(p / "w.pdf"), p / "x.docx"),
        CorruptInput,
        None,
    ),
    "unreadable to docling": (
        lambda p: _docx_docling_cannot_read(p / "x.docx"),
        CorruptInput,
        None,
    ),
    "unknown extension": (
        lambda p: parse_inputs.markdown(p / "x.rtf"),
        UnsupportedFeature,
        "format:rtf",
    ),
    "encrypted pdf": (
        lambda p: parse_inputs.encrypted_pdf(p / "x.pdf"),
        UnsupportedFeature,
        "encrypted",
    ),
    "zip bomb by ratio": (lambda p: parse_inputs.zip_bomb_ratio(p / "x.docx"), CorruptInput, None),
    "zip bomb by entries": (
        lambda p: parse_inputs.zip_bomb_entries(p / "x.xlsx"),
        CorruptInput,
        None,
    ),
    "xml entity expansion": (
        lambda p: parse_inputs.xml_entity_expansion(p / "x.docx", parse_inputs.docx(p / "w.docx")),
        CorruptInput,
        None,
    ),
    "password-protected zip entries": (
        lambda p: parse_inputs.encrypted_entries(p / "x.docx", parse_inputs.docx(p / "w.docx")),
        UnsupportedFeature,
        "encrypted",
    ),
    "a sheet whose used range is the whole grid": (
        lambda p: parse_inputs.sparse_xlsx(p / "x.xlsx", "XFD1048576"),
        UnsupportedFeature,
        "sheet_too_large",
    ),
}


@pytest.mark.parametrize("case", FAILURES)
def test_each_failure_class_is_typed_through_the_worker(worker, tmp_path, case):
    make, error, feature = FAILURES[case]
    with pytest.raises(PipelineError) as info:
        _parse(worker, make(tmp_path), tmp_path)
    assert type(info.value) is error
    assert info.value.feature == feature


def test_more_pages_than_max_pages_is_unsupported(worker, tmp_path):
    path = parse_inputs.pdf(tmp_path / "long.pdf", pages=3)
    with pytest.raises(UnsupportedFeature) as info:
        _parse(worker, path, tmp_path, ParseLimits(max_pages=2, timeout_s=60, mem_ceiling_mb=4096))
    assert info.value.feature == "max_pages"


def test_an_oversized_document_over_a_small_ceiling_is_retryable_and_the_worker_survives(
    worker, tmp_path
):
    _parse(worker, parse_inputs.markdown(tmp_path / "warm.md"), tmp_path)
    zygote = worker.server.zygote_pid
    big = parse_inputs.pdf(tmp_path / "big.pdf", pages=100)
    small_ceiling = ParseLimits(max_pages=2000, timeout_s=120, mem_ceiling_mb=320)
    with pytest.raises(ResourceLimit, match="mem_ceiling_mb=320") as info:
        _parse(worker, big, tmp_path, small_ceiling)
    assert info.value.kind is FailureKind.RESOURCE_LIMIT
    assert kind_of_exit_code(info.value.exit_code) is FailureKind.RESOURCE_LIMIT
    report, doc = _parse(worker, parse_inputs.docx(tmp_path / "next.docx"), tmp_path)
    assert doc.texts and report.pipeline is Pipeline.SIMPLE
    assert worker.server.zygote_pid == zygote


def test_a_conversion_past_timeout_s_is_a_resource_limit(blocking_parse_worker, tmp_path):
    # The conversion never finishes (see the fixture), so only the timeout can end it,
    # however fast the machine is.
    document = parse_inputs.docx(tmp_path / "any.docx")
    with pytest.raises(ResourceLimit, match=r"timeout_s=0\.5"):
        _parse(
            blocking_parse_worker,
            document,
            tmp_path,
            ParseLimits(max_pages=2000, timeout_s=0.5, mem_ceiling_mb=4096),
        )


def test_an_object_above_max_object_mb_is_refused_before_the_worker_sees_it(worker, tmp_path):
    big = tmp_path / "big.md"
    big.write_bytes(b"# Big\n\n" + b"lorem ipsum " * (200 * 1024))  # 2.3 MiB
    with pytest.raises(UnsupportedFeature, match="max_object_mb=2") as info:
        _parse(
            worker,
            big,
            tmp_path,
            ParseLimits(max_pages=2000, timeout_s=120, mem_ceiling_mb=4096, max_object_mb=2),
        )
    assert info.value.feature == "max_size"


def test_missing_model_weights_are_an_internal_error_not_the_document_s_fault(tmp_path):
    # The standard pipeline pointed at a folder without real weights: the worker's
    # warm-up fails, and every document would fail alike.
    root = tmp_path / "models"
    for name in (LAYOUT_MODEL_DIR, TABLE_MODEL_DIR):
        (root / name).mkdir(parents=True)
        (root / name / "model.safetensors").write_bytes(b"not weights")
    misconfigured = ParseWorker(ParserSettings(Pipeline.STANDARD, str(root)), quiet=True)
    try:
        with pytest.raises(InternalError, match="failed to start: FileNotFoundError"):
            _parse(misconfigured, parse_inputs.pdf(tmp_path / "a.pdf"), tmp_path)
    finally:
        misconfigured.close()


def _raised(action):
    try:
        action()
    except Exception as exc:
        return exc
    raise AssertionError("no exception")


def _pipeline_failure(cause: BaseException) -> RuntimeError:
    # What docling raises around an exception from a pipeline stage.
    return _raised(lambda: _raise_from(RuntimeError("Pipeline SimplePipeline failed"), cause))


def _raise_from(error: BaseException, cause: BaseException) -> None:
    raise error from cause


def _torch_shape_error() -> BaseException:
    import torch

    return _raised(lambda: torch.nn.Linear(3, 4)(torch.zeros(2, 5)))


def _torch_missing_weights(path: str) -> BaseException:
    import torch

    return _raised(lambda: torch.load(path))


def test_docling_failures_caused_by_the_environment_are_internal(tmp_path):
    for cause in (
        ModuleNotFoundError("No module named 'openpyxl'"),
        _torch_shape_error(),  # raised inside torch: a model or accelerator fault
        _torch_missing_weights(str(tmp_path / "missing.pt")),
    ):
        error = conversion_error(_pipeline_failure(cause))
        assert isinstance(error, InternalError), cause
        assert "misconfigured" in error.reason


def test_docling_failures_of_the_document_are_corrupt_input():
    import zipfile as zf

    for cause in (zf.BadZipFile("File is not a zip file"), KeyError("word/document.xml")):
        assert isinstance(conversion_error(_pipeline_failure(cause)), CorruptInput)


def test_out_of_memory_and_out_of_disk_are_left_to_the_worker():
    import errno

    assert conversion_error(_pipeline_failure(MemoryError())) is None
    full = OSError(errno.ENOSPC, "No space left on device")
    assert conversion_error(_pipeline_failure(full)) is None


def test_failed_pages_escalate_below_the_biggest_tier(worker, tmp_path):
    path = parse_inputs.pdf_with_broken_page(tmp_path / "broken.pdf", pages=5, broken=2)
    with pytest.raises(ResourceLimit, match="1 of 5 pages failed"):
        _parse(worker, path, tmp_path, accept_partial=False)


def test_failed_pages_are_accepted_and_recorded_at_the_biggest_tier(worker, tmp_path):
    path = parse_inputs.pdf_with_broken_page(tmp_path / "broken.pdf", pages=5, broken=2)
    report, doc = _parse(worker, path, tmp_path, accept_partial=True)
    assert (report.partial, report.failed_pages, report.page_count) == (True, [2], 5)
    assert {prov.page_no for text in doc.texts for prov in text.prov} == {1, 3, 4, 5}


def test_several_threads_parse_at_once_through_one_worker(worker, tmp_path):
    makers = [parse_inputs.docx, parse_inputs.pptx, parse_inputs.pdf, parse_inputs.markdown]
    outcomes: dict[str, ParseReport | PipelineError] = {}

    def work(make) -> None:
        folder = tmp_path / make.__name__
        folder.mkdir()
        suffix = {"markdown": "md"}.get(make.__name__, make.__name__)
        try:
            outcomes[make.__name__] = _parse(worker, make(folder / f"doc.{suffix}"), folder)[0]
        except PipelineError as exc:
            outcomes[make.__name__] = exc

    threads = [threading.Thread(target=work, args=(make,)) for make in makers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # An error in place of a report shows in the comparison.
    assert {name: getattr(report, "pipeline", report) for name, report in outcomes.items()} == {
        "docx": Pipeline.SIMPLE,
        "pptx": Pipeline.SIMPLE,
        "pdf": Pipeline.NATIVE,
        "markdown": Pipeline.SIMPLE,
    }


def test_the_docling_zygote_is_single_threaded_when_it_forks(worker, tmp_path):
    _parse(worker, parse_inputs.markdown(tmp_path / "a.md"), tmp_path)
    assert worker.server.hello is not None and worker.server.hello.threads == 1


def test_a_document_timeout_reaches_the_warm_pipeline_without_rebuilding_it(tmp_path):
    converter = build_converters(ParserSettings(Pipeline.NATIVE))[DocFormat.PDF]
    warm = dict(converter.initialized_pipelines)
    set_document_timeout(converter, 1.5)
    converter.convert(parse_inputs.pdf(tmp_path / "a.pdf", pages=1))
    assert converter.initialized_pipelines.keys() == warm.keys()
    [pipeline] = converter.initialized_pipelines.values()
    assert pipeline.pipeline_options.document_timeout == 1.5
