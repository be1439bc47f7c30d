"""What an exception raised while docling converts a document means for the job.

``CONTENT_ERRORS`` is the audit of what docling's backends, docling-parse and pdfium raise
on document content (read in their sources, and seen converting damaged and fuzzed
files): every exception type with its failure kind. docs/parse.md has the same table
with where each comes from; a test holds the two together and imports every type from
the installed libraries. Types are named, not imported: this module runs in the parse
child, and ``conversion_error`` must not fail on a library that moved a class.
"""

from __future__ import annotations

from typing import NamedTuple

from richdoc.taxonomy import (
    CorruptInput,
    FailureKind,
    InternalError,
    PipelineError,
    UnsupportedFeature,
    caused_by,
    exception_chain,
    out_of_space,
)


class ContentError(NamedTuple):
    """An exception type raised on document content, and what it means."""

    exception: str  # the class's module and qualified name, where the library defines it
    kind: FailureKind
    feature: str | None = None  # the tag of an unsupported feature


_CORRUPT = FailureKind.CORRUPT_INPUT

CONTENT_ERRORS: tuple[ContentError, ...] = (
    # docling: what DocumentConverter.convert raises, and its backends' load failures.
    ContentError("docling.exceptions.ConversionError", _CORRUPT),
    ContentError("docling.exceptions.DocumentLoadError", _CORRUPT),
    ContentError("docling.exceptions.SecurityError", _CORRUPT),
    # docling's own archive limits (DOCX, XLSX: 512 MiB unpacked, 128 MiB a part): a
    # document within the inspection's bounds that docling will not unpack at any tier.
    ContentError(
        "docling.backend.utils.archive_limits.ArchiveLimitError",
        FailureKind.UNSUPPORTED_FEATURE,
        "archive_too_large",
    ),
    # pdfium: the inspection's (richdoc.formats maps it there, passwords as encrypted).
    ContentError("pypdfium2._helpers.misc.PdfiumError", _CORRUPT),
    # The libraries the backends read packages, markup and images with.
    ContentError("zipfile.BadZipFile", _CORRUPT),
    ContentError("zlib.error", _CORRUPT),
    ContentError("lxml.etree.XMLSyntaxError", _CORRUPT),
    ContentError("xml.etree.ElementTree.ParseError", _CORRUPT),
    ContentError("docx.exceptions.InvalidXmlError", _CORRUPT),
    ContentError("pptx.exc.PackageNotFoundError", _CORRUPT),
    ContentError("pptx.exc.InvalidXmlError", _CORRUPT),
    ContentError("bs4.exceptions.ParserRejectedMarkup", _CORRUPT),
    ContentError("PIL.UnidentifiedImageError", _CORRUPT),
    ContentError("PIL.Image.DecompressionBombError", _CORRUPT),
    # Built-in types the backends, their libraries and docling-parse's native code (as
    # pybind11 translates C++ exceptions) raise on structures they do not expect.
    ContentError("builtins.RuntimeError", _CORRUPT),
    ContentError("builtins.ValueError", _CORRUPT),
    ContentError("builtins.KeyError", _CORRUPT),
    ContentError("builtins.AttributeError", _CORRUPT),
    ContentError("builtins.TypeError", _CORRUPT),
    ContentError("builtins.UnicodeDecodeError", _CORRUPT),
    ContentError("builtins.OSError", _CORRUPT),
    ContentError("builtins.RecursionError", _CORRUPT),
    # Not the document's fault (decided before the table: see conversion_error).
    ContentError("builtins.MemoryError", FailureKind.RESOURCE_LIMIT),
    ContentError("builtins.ImportError", FailureKind.INTERNAL),
)
_BY_NAME = {entry.exception: entry for entry in CONTENT_ERRORS}


def _dotted(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def content_error(exc: BaseException) -> ContentError | None:
    """The audited entry for ``exc``: its own type's, or its nearest base class's."""
    for cls in type(exc).__mro__:
        entry = _BY_NAME.get(_dotted(cls))
        if entry is not None:
            return entry
    return None


def describe(exc: BaseException, limit: int = 400) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if exc.__cause__ is not None:
        text += f" (caused by {type(exc.__cause__).__name__}: {exc.__cause__})"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Packages whose failures are the worker's environment, not the document: the model
# stack (weights, accelerators, their loaders) and docling's model wrappers.
ENVIRONMENT_PACKAGES = frozenset(
    {
        "torch",
        "torchvision",
        "transformers",
        "huggingface_hub",
        "safetensors",
        "onnxruntime",
        "accelerate",
        "docling_ibm_models",
    }
)


def _package(module: str | None) -> str:
    return (module or "").partition(".")[0]


def _raised_in(error: BaseException) -> str:
    """The top-level package of the innermost Python frame that raised ``error``."""
    tb = error.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return _package(tb.tb_frame.f_globals.get("__name__"))


def environment_fault(exc: BaseException) -> BaseException | None:
    """The error in ``exc``'s chain that says the worker is misconfigured, if any: a
    missing module (a broken install), or a failure raised by the model stack (missing
    or unreadable weights, an accelerator error)."""
    for error in exception_chain(exc):
        if isinstance(error, ImportError):
            return error
        if ENVIRONMENT_PACKAGES & {_package(type(error).__module__), _raised_in(error)}:
            return error
    return None


def conversion_error(exc: BaseException) -> PipelineError | None:
    """What a docling exception means for the job.

    Running out of memory or disk is left to the worker (None: it reports a resource
    limit); a fault of the environment is internal (dead-lettered and visible as ours,
    never blamed on the document); a feature docling will not handle is unsupported;
    anything else docling raised, audited or not, is a document it cannot read.
    """
    if caused_by(exc, MemoryError) or out_of_space(exc) is not None:
        return None
    fault = environment_fault(exc)
    if fault is not None:
        return InternalError(
            f"the parse worker is misconfigured: {describe(fault)} (while converting: "
            f"{describe(exc)})"
        )
    # An unsupported feature anywhere in the chain wins over the damage docling reports
    # around it (a ConversionError caused by an ArchiveLimitError).
    for error in exception_chain(exc):
        entry = content_error(error)
        if entry is not None and entry.kind is FailureKind.UNSUPPORTED_FEATURE:
            return UnsupportedFeature(
                f"docling will not convert the document: {describe(error)}",
                feature=entry.feature or "unknown",
            )
    return CorruptInput(f"docling could not convert the document: {describe(exc)}")
