"""The audit of what docling, docling-parse and pdfium raise on document content
(``richdoc.parse.classify.CONTENT_ERRORS``): the table in docs/parse.md is the code's,
every type exists in the installed libraries, each maps to its kind, and the ones that
are not damage take their own route through real conversions.

And the proof that the inspection and docling read the same bytes for every part of an
OOXML package: both read with zipfile, and a name the inspection let through resolves to
the one entry it scanned."""

from __future__ import annotations

import importlib
import re
import zipfile
from pathlib import Path

import pytest

from richdoc.formats import ArchiveLimits, DocFormat, inspect_file
from richdoc.parse.classify import CONTENT_ERRORS, ContentError, content_error, conversion_error
from richdoc.parse.settings import ParserSettings, Pipeline
from richdoc.taxonomy import (
    CorruptInput,
    FailureKind,
    InternalError,
    PipelineError,
    UnsupportedFeature,
    exception_chain,
)
from tests.support import damaged_inputs, parse_inputs
from tests.support.paths import ROOT

pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

AUDIT_HEADING = "### What the libraries raise on document content"


def _documented() -> dict[str, FailureKind]:
    """The audit table of docs/parse.md: exception type -> kind."""
    text = (ROOT / "docs" / "parse.md").read_text()
    section = text.split(AUDIT_HEADING, 1)[1].split("\n#", 1)[0]
    kinds = "|".join(kind.value for kind in FailureKind)
    table = {}
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        kind = re.search(rf"`({kinds})`", cells[-1])
        assert kind, row
        for name in re.findall(r"`([\w.]+)`", cells[0]):
            table[name] = FailureKind(kind[1])
    return table


def test_the_documented_audit_is_the_code_s():
    assert _documented() == {entry.exception: entry.kind for entry in CONTENT_ERRORS}


def _type(entry: ContentError) -> type[BaseException]:
    module, _, name = entry.exception.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type) and issubclass(cls, BaseException), entry
    return cls


@pytest.mark.parametrize("entry", CONTENT_ERRORS, ids=[e.exception for e in CONTENT_ERRORS])
def test_every_audited_type_is_where_the_installed_library_defines_it(entry):
    assert f"{_type(entry).__module__}.{_type(entry).__qualname__}" == entry.exception


def _raised_through_docling(error: BaseException) -> BaseException:
    """``error`` as docling hands it over: the cause of a ConversionError."""
    from docling.exceptions import ConversionError

    try:
        try:
            raise error
        except BaseException as cause:
            raise ConversionError("Conversion failed for: document.docx") from cause
    except ConversionError as wrapped:
        return wrapped


# The arguments of the types that take more than a message.
ARGUMENTS: dict[str, tuple[object, ...]] = {
    "builtins.UnicodeDecodeError": ("utf-8", b"\xff", 0, 1, "invalid start byte"),
    "lxml.etree.XMLSyntaxError": ("not well-formed", 0, 1, 1, "word/document.xml"),
}


@pytest.mark.parametrize("entry", CONTENT_ERRORS, ids=[e.exception for e in CONTENT_ERRORS])
def test_each_audited_type_gets_its_kind(entry):
    error = _type(entry)(*ARGUMENTS.get(entry.exception, ("raised on the document",)))
    assert content_error(error) == entry
    mapped = conversion_error(_raised_through_docling(error))
    expected: type[PipelineError] | None = {
        FailureKind.CORRUPT_INPUT: CorruptInput,
        FailureKind.UNSUPPORTED_FEATURE: UnsupportedFeature,
        FailureKind.INTERNAL: InternalError,
        FailureKind.RESOURCE_LIMIT: None,  # the worker reports it
    }[entry.kind]
    if expected is None:
        assert mapped is None
    else:
        assert type(mapped) is expected
        assert mapped.feature == entry.feature


def test_a_type_nobody_audited_that_docling_raises_is_still_the_document_s():
    class Surprise(Exception):
        pass

    assert content_error(Surprise()) is None
    assert isinstance(conversion_error(_raised_through_docling(Surprise())), CorruptInput)


# ---- the types that are not damage, through real conversions -------------------------------


@pytest.fixture(scope="module")
def converters():
    from richdoc.parse.convert import build_converters

    return build_converters(ParserSettings(Pipeline.NATIVE))


def _convert(converters, fmt: DocFormat, path: Path) -> BaseException:
    staged = path.with_name(f"document.{fmt}")
    staged.write_bytes(path.read_bytes())
    with pytest.raises(Exception) as info:
        converters[fmt].convert(staged, raises_on_error=True)
    return info.value


def test_a_package_over_docling_s_archive_limits_is_unsupported_not_corrupt(tmp_path):
    # docling's own limit for a part is 128 MiB unpacked; a smaller one makes the same
    # refusal with a document a test can hold.
    from docling.datamodel.backend_options import MsWordBackendOptions
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter, WordFormatOption

    small = WordFormatOption(
        backend_options=MsWordBackendOptions.model_validate({"max_file_bytes": 1024})
    )
    converter = DocumentConverter(
        allowed_formats=[InputFormat.DOCX], format_options={InputFormat.DOCX: small}
    )
    converters = {DocFormat.DOCX: converter}
    raised = _convert(converters, DocFormat.DOCX, parse_inputs.docx(tmp_path / "big.docx"))
    error = conversion_error(raised)
    assert isinstance(error, UnsupportedFeature)
    assert error.feature == "archive_too_large"
    assert "ArchiveLimitError" in error.reason


def test_an_image_over_pillow_s_pixel_limit_fails_the_conversion_as_corrupt(converters, tmp_path):
    raised = _convert(converters, DocFormat.DOCX, damaged_inputs.docx_with_image_bomb(tmp_path))
    assert "DecompressionBombError" in {type(e).__name__ for e in exception_chain(raised)}
    assert isinstance(conversion_error(raised), CorruptInput)


# ---- the inspection and docling read the same bytes for every part -------------------------


class _Reads:
    """Every entry zipfile opens, by name, with where its local header starts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entries: list[tuple[str, int]] = []
        original = zipfile.ZipFile.open

        def recording(archive, name, *args, **kwargs):
            info = name if isinstance(name, zipfile.ZipInfo) else archive.getinfo(name)
            self.entries.append((info.filename, info.header_offset))
            return original(archive, name, *args, **kwargs)

        monkeypatch.setattr(zipfile.ZipFile, "open", recording)

    def take(self) -> dict[str, set[int]]:
        taken: dict[str, set[int]] = {}
        for name, offset in self.entries:
            taken.setdefault(name, set()).add(offset)
        self.entries.clear()
        return taken


@pytest.mark.parametrize(
    ("make", "fmt"),
    [
        (parse_inputs.docx, DocFormat.DOCX),
        (parse_inputs.pptx, DocFormat.PPTX),
        (parse_inputs.xlsx, DocFormat.XLSX),
    ],
    ids=["docx", "pptx", "xlsx"],
)
def test_docling_reads_each_part_from_the_entry_the_inspection_scanned(
    converters, tmp_path, monkeypatch, make, fmt
):
    staged = make(tmp_path / f"document.{fmt}")
    reads = _Reads(monkeypatch)
    inspect_file(staged, fmt, max_pages=2000, archive=ArchiveLimits.for_ceiling(4096))
    scanned = reads.take()
    converters[fmt].convert(staged, raises_on_error=True)
    read_by_docling = reads.take()
    assert read_by_docling  # python-docx, python-pptx, openpyxl: all through zipfile
    with zipfile.ZipFile(staged) as archive:
        assert len({info.filename for info in archive.infolist()}) == len(archive.infolist())
    for name, offsets in read_by_docling.items():
        assert offsets == scanned[name], name  # one entry per name: the one inspected


def test_with_two_entries_for_a_name_docling_would_read_bytes_the_inspection_did_not_trust(
    converters, tmp_path, monkeypatch
):
    """What the refusal prevents: docling, unguarded, converts the later entry."""
    book = parse_inputs.xlsx(tmp_path / "plain.xlsx")
    with zipfile.ZipFile(book) as archive:
        hidden = archive.read("xl/worksheets/sheet1.xml").replace(b"item 1", b"HIDDEN")
    staged = damaged_inputs.with_duplicate_entry(
        tmp_path / "document.xlsx", book, "xl/worksheets/sheet1.xml", hidden
    )
    with pytest.raises(CorruptInput, match=r"two entries named 'xl/worksheets/sheet1\.xml'"):
        inspect_file(staged, DocFormat.XLSX, max_pages=2000, archive=ArchiveLimits.for_ceiling(64))
    result = converters[DocFormat.XLSX].convert(staged, raises_on_error=True)
    assert "HIDDEN" in result.document.export_to_markdown()
