"""Images as documents: the inspection decodes every frame before docling sees it, and
hostile files get their kinds (richdoc.formats.image)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from richdoc.formats import ArchiveLimits, DocFormat, Inspection, format_of, inspect_file
from richdoc.taxonomy import CorruptInput, UnsupportedFeature

LIMITS = ArchiveLimits.for_ceiling(4096)


def _inspect(path: Path, max_pages: int = 2000) -> Inspection:
    return inspect_file(path, DocFormat.IMAGE, max_pages=max_pages, archive=LIMITS)


def _image(size: tuple[int, int] = (120, 40), mode: str = "L") -> Image.Image:
    return Image.new(mode, size, 255)


def _saved(path: Path, fmt: str, frames: int = 1, **options: object) -> Path:
    images = [_image() for _ in range(frames)]
    images[0].save(path, fmt, save_all=frames > 1, append_images=images[1:], **options)
    return path


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("scan.png", "PNG"),
        ("scan.jpg", "JPEG"),
        ("scan.JPEG", "JPEG"),
        ("scan.tif", "TIFF"),
        ("scan.tiff", "TIFF"),
        ("scan.bmp", "BMP"),
        ("scan.webp", "WEBP"),
        ("scan.gif", "GIF"),
    ],
)
def test_every_image_format_is_a_document_of_pages_only_ocr_reads(
    tmp_path: Path, name: str, fmt: str
) -> None:
    assert format_of(name) is DocFormat.IMAGE
    inspection = _inspect(_saved(tmp_path / name, fmt))
    assert (inspection.page_count, inspection.image_only) == (1, (1,))


def test_a_multi_page_tiff_has_a_page_per_frame(tmp_path: Path) -> None:
    inspection = _inspect(_saved(tmp_path / "fax.tiff", "TIFF", frames=3))
    assert (inspection.page_count, inspection.image_only) == (3, (1, 2, 3))


def test_more_frames_than_max_pages_is_unsupported(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeature) as refused:
        _inspect(_saved(tmp_path / "fax.tiff", "TIFF", frames=3), max_pages=2)
    assert refused.value.feature == "max_pages"


def test_an_image_is_judged_by_its_content_not_its_extension(tmp_path: Path) -> None:
    png_named_jpg = _saved(tmp_path / "x.jpg", "PNG")
    assert _inspect(png_named_jpg).page_count == 1


def _bomb(path: Path) -> Path:
    # 100 million one-bit pixels: about 12 KB on disk, above Pillow's 89 million limit.
    Image.new("1", (10_000, 10_000)).save(path, "PNG")
    return path


def _bomb_in_a_later_frame(path: Path) -> Path:
    small, huge = Image.new("1", (120, 40), 1), Image.new("1", (10_000, 9_500))
    small.save(path, "TIFF", save_all=True, append_images=[huge], compression="group4")
    return path


def _truncated(path: Path) -> Path:
    buffer = io.BytesIO()
    Image.effect_noise((400, 400), 60).save(buffer, "PNG")
    path.write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    return path


def _pdf_named_png(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
    return path


def _random_bytes(path: Path) -> Path:
    path.write_bytes(bytes(range(256)) * 40)
    return path


def _an_image_docling_does_not_read(path: Path) -> Path:
    _image().save(path, "PPM")
    return path


HOSTILE: dict[str, tuple[Callable[[Path], Path], str]] = {
    "decompression bomb": (_bomb, "decompression bomb"),
    "bomb in a later frame": (_bomb_in_a_later_frame, "page 2"),
    "truncated": (_truncated, "truncated"),
    "a pdf named png": (_pdf_named_png, "not an image"),
    "random bytes": (_random_bytes, "not an image"),
    "another image format": (_an_image_docling_does_not_read, "PPM"),
    "zero bytes": (lambda p: (p.write_bytes(b""), p)[1], "empty"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_images_are_corrupt_input(tmp_path: Path, case: str) -> None:
    make, reason = HOSTILE[case]
    with pytest.raises(CorruptInput, match=reason):
        _inspect(make(tmp_path / "x.png"))
