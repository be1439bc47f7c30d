"""Scanned documents made here, deterministically: known text typeset by reportlab,
rendered to grey pixels by pdfium at a chosen resolution (optionally with noise and a
small skew, seeded), then stored as an image-only PDF or as an image file. The tests and
the OCR accuracy benchmark (bench/ocr_bench.py) read them; the text they were made from
is the ground truth."""

from __future__ import annotations

import io
import random
import time
from collections.abc import Sequence

from PIL import Image, ImageFilter

# A page of a contract whose effective and signed dates conflict (the detector's
# conflicting_dates rule), each dated sentence on a line of its own.
CONTRACT_PAGES: tuple[tuple[str, ...], ...] = (
    (
        "MASTER SERVICES AGREEMENT",
        "This Agreement is effective as of March 1, 2024 between Acme Corp and Beta LLC.",
        "Beta LLC provides the services described in Schedule A to Acme Corp.",
        "Acme Corp pays each invoice within thirty days of receiving it.",
    ),
    (
        "Either party may end this Agreement with sixty days written notice.",
        "This Agreement was signed on February 14, 2025 by both parties.",
    ),
)
A4 = (595.0, 842.0)  # points
PINNED_TIME = time.gmtime(1704164645)  # 2024-01-02T03:04:05Z, the golden corpus's moment


def typeset(
    pages: Sequence[Sequence[str]], *, font: str = "Helvetica", font_size: float = 12
) -> bytes:
    """A text PDF with ``pages`` of lines (one line each, 28 points apart)."""
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4, invariant=True)
    for lines in pages:
        page.setFont(font, font_size)
        for n, line in enumerate(lines):
            page.drawString(72, A4[1] - 90 - 28 * n, line)
        page.showPage()
    page.save()
    return buffer.getvalue()


def rendered(
    pdf: bytes, *, dpi: int = 200, noise: float = 0.0, skew: float = 0.0, seed: int = 0
) -> list[Image.Image]:
    """The PDF's pages as grey images, as a scanner at ``dpi`` would give them: with
    ``noise`` (the share of pixels flipped to random grey, then softened by a slight blur)
    and ``skew`` (degrees of rotation), reproducibly from ``seed``."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        pages = [
            document[i].render(scale=dpi / 72).to_pil().convert("L") for i in range(len(document))
        ]
    finally:
        document.close()
    return [_degraded(page, noise, skew, seed + n) for n, page in enumerate(pages)]


def _degraded(image: Image.Image, noise: float, skew: float, seed: int) -> Image.Image:
    if skew:
        image = image.rotate(skew, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    if noise:
        rng = random.Random(seed)
        pixels = image.load()
        assert pixels is not None
        width, height = image.size
        for _ in range(int(noise * width * height)):
            pixels[rng.randrange(width), rng.randrange(height)] = rng.randrange(256)
        image = image.filter(ImageFilter.GaussianBlur(0.6))
    return image


def image_pdf(images: Sequence[Image.Image], *, dpi: int = 200) -> bytes:
    """An image-only PDF: one full-page picture a page, no text layer (a scan). Its
    dates are pinned (Pillow stamps the clock), so the same images give the same bytes."""
    buffer = io.BytesIO()
    first, *rest = images
    first.save(
        buffer,
        "PDF",
        resolution=dpi,
        save_all=True,
        append_images=rest,
        creationDate=PINNED_TIME,
        modDate=PINNED_TIME,
    )
    return buffer.getvalue()


def scanned_pdf(
    pages: Sequence[Sequence[str]],
    *,
    dpi: int = 200,
    font: str = "Helvetica",
    font_size: float = 12,
    **degrade: float,
) -> bytes:
    """``pages`` of lines, typeset, printed and scanned into an image-only PDF."""
    text = typeset(pages, font=font, font_size=font_size)
    return image_pdf(rendered(text, dpi=dpi, **degrade), dpi=dpi)  # type: ignore[arg-type]


def mixed_pdf(parts: Sequence[tuple[str, Sequence[str]]], *, dpi: int = 200) -> bytes:
    """One page per part, in order: ``("text", lines)`` keeps its text layer,
    ``("scan", lines)`` is an image of the lines only."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for kind, lines in parts:
        single = typeset([lines]) if kind == "text" else scanned_pdf([lines], dpi=dpi)
        writer.add_page(PdfReader(io.BytesIO(single)).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def image_file(
    pages: Sequence[Sequence[str]], fmt: str, *, dpi: int = 200, crop: bool = True
) -> bytes:
    """``pages`` of lines scanned into an image file of Pillow's ``fmt`` (several frames
    for a multi-page TIFF), each page cropped to its text (``crop``: a small image OCRs
    in a fraction of a page's time), the resolution recorded where the format keeps it."""
    images = rendered(typeset(pages), dpi=dpi)
    if crop:
        images = [_cropped(image, dpi) for image in images]
    if fmt in {"JPEG", "GIF", "BMP"}:
        images = [image.convert("L") for image in images]
    buffer = io.BytesIO()
    first, *rest = images
    options: dict[str, object] = {}
    if fmt in {"PNG", "JPEG", "TIFF", "BMP", "WEBP"}:
        options["dpi"] = (dpi, dpi)
    if fmt == "WEBP":
        options["lossless"] = True
    if rest:
        options.update(save_all=True, append_images=rest)
    first.save(buffer, fmt, **options)
    return buffer.getvalue()


def _cropped(image: Image.Image, dpi: int) -> Image.Image:
    """The page around its ink, with a margin of a sixth of an inch."""
    from PIL import ImageOps

    box = ImageOps.invert(image).getbbox()
    if box is None:
        return image
    margin = dpi // 6
    left, top, right, bottom = box
    return image.crop(
        (max(0, left - margin), max(0, top - margin), right + margin, bottom + margin)
    )


def picture_png() -> bytes:
    """A page that is only a picture: red, with a pattern of light dots, no text."""
    from PIL import ImageDraw

    image = Image.new("RGB", (1200, 900), (200, 30, 30))
    draw = ImageDraw.Draw(image)
    for x in range(0, 1200, 12):
        for y in range(0, 900, 12):
            draw.ellipse((x, y, x + 3, y + 3), fill=(255, 230, 230))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", dpi=(150, 150))
    return buffer.getvalue()


def drawing_pdf() -> bytes:
    """A page that holds only vector shapes: a filled rectangle, no text, no image."""
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4, invariant=True)
    page.setFillColorRGB(0.2, 0.4, 0.8)
    page.rect(100, 400, 300, 200, fill=1, stroke=0)
    page.showPage()
    page.save()
    return buffer.getvalue()
