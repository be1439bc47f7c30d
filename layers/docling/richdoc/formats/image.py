"""Images (PNG, JPEG, TIFF, BMP, WEBP, GIF): every frame decoded by Pillow before docling
sees it, under Pillow's pixel limit; each frame is a page with no text layer, which only
OCR reads."""

from __future__ import annotations

import warnings
from pathlib import Path

from richdoc.formats.inspection import Inspection, check_pages
from richdoc.taxonomy import CorruptInput

# What Pillow may call the content of a file docling reads as an image (its
# ImageDocumentBackend opens anything Pillow opens; these are the formats of the
# extensions it accepts: MPO is a JPEG with extra frames, as cameras write them).
IMAGE_FORMATS = frozenset({"PNG", "JPEG", "MPO", "TIFF", "BMP", "WEBP", "GIF"})


def inspect_image(path: Path, max_pages: int) -> Inspection:
    """Decode every frame (a multi-page TIFF's pages) once: content that is no image of
    these formats, a frame above Pillow's pixel limit (``Image.MAX_IMAGE_PIXELS``, 89
    million: a decompression bomb) and truncated or damaged data are ``CorruptInput``;
    more frames than ``max_pages`` is ``max_pages``. An image is judged by its content,
    not its extension: a PNG named ``.jpg`` is read as the PNG it is."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            # Pillow only warns between its limit and twice it; here the limit refuses.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                if image.format not in IMAGE_FORMATS:
                    raise CorruptInput(
                        f"not an image docling reads: the content is {image.format} "
                        f"(one of {', '.join(sorted(IMAGE_FORMATS))} is needed)"
                    )
                frames = int(getattr(image, "n_frames", 1))
                check_pages(frames, max_pages, "pages")
                for index in range(frames):
                    image.seek(index)
                    _check_pixels(image.width, image.height, index + 1, _pixel_limit())
                    image.load()
    except UnidentifiedImageError as exc:
        raise CorruptInput("not an image: Pillow recognises no image format in it") from exc
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise CorruptInput(f"a decompression bomb: {exc}") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        # Pillow's words for truncated or damaged image data ("image file is truncated",
        # "broken data stream", "Truncated File Read", a bad frame count).
        raise CorruptInput(f"the image is damaged or truncated: {exc}") from exc
    return Inspection(page_count=frames, image_only=tuple(range(1, frames + 1)))


def _pixel_limit() -> int:
    """Pillow's limit, as configured (None would mean none: then Pillow's default)."""
    from PIL import Image

    return Image.MAX_IMAGE_PIXELS or 89_478_485


def _check_pixels(width: int, height: int, page: int, limit: int) -> None:
    if width * height > limit:
        raise CorruptInput(
            f"a decompression bomb: page {page} is {width} x {height} pixels, above the "
            f"limit of {limit} pixels"
        )
