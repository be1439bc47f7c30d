"""Damaged and exotic documents as real-world corpora hold them, made here byte by byte:
PDFs with a recursive page tree or cut short, image-only PDFs of every kind a scanner or a
typesetter writes (CCITT, JBIG2, a large inline image, text drawn as outlines), and OOXML
packages with two entries for one part name.

Each generator writes one file and returns its path.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

PAGE = "/MediaBox [0 0 612 792]"
HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _text(line: str) -> bytes:
    return f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET".encode()


def _stream(data: bytes, entries: str = "") -> bytes:
    return f"<< /Length {len(data)} {entries}>>\nstream\n".encode() + data + b"\nendstream"


def raw_pdf(
    path: Path, objects: Sequence[bytes], *, early_trailer: bool = False, cut_at: int = 0
) -> Path:
    """A PDF of ``objects`` (object 1 is the catalog) with a correct cross-reference
    table. ``early_trailer`` writes a trailer after the first objects (those before the
    first content stream) as a linearized file's first-page section does; ``cut_at``
    (the number of the first object left out) cuts the file short there, as an aborted
    download does."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode()
    for number, body in enumerate(objects, 1):
        if early_trailer and b"stream" in body and trailer not in out:
            out += trailer
        if number == cut_at:
            path.write_bytes(bytes(out))
            return path
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += trailer + f"startxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def _pages_pdf(
    path: Path, contents: Sequence[bytes], resources: str, extra: Sequence[bytes] = ()
) -> Path:
    """One page per content stream: 1 catalog, 2 page tree, then pages and their
    streams in pairs, then ``extra`` objects (numbered from 3 + 2 * pages)."""
    first_extra = 3 + 2 * len(contents)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(contents)))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(contents)} >>".encode())
    for i, content in enumerate(contents):
        page = f"<< /Type /Page /Parent 2 0 R {PAGE} /Contents {4 + 2 * i} 0 R "
        objects += [(page + f"/Resources {resources} >>").encode(), _stream(content)]
    objects += extra
    assert first_extra == len(objects) - len(extra) + 1
    return raw_pdf(path, objects)


def recursive_page_tree(path: Path) -> Path:
    """A PDF whose page tree's first kid is a /Pages node whose only kid is the root
    again: pdfium loads the document but none of its pages ("Failed to load page.")."""
    return raw_pdf(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [4 0 R 3 0 R] /Count 2 >>",
            f"<< /Type /Page /Parent 2 0 R {PAGE} /Contents 5 0 R "
            "/Resources << /Font << /F1 6 0 R >> >> >>".encode(),
            b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>",
            _stream(_text("A page nobody reaches")),
            HELVETICA,
        ],
    )


def later_page_unloadable(path: Path) -> Path:
    """A PDF whose first page has text and whose page tree lists itself as its second
    kid: the inspection reads the first page and stops, pdfium cannot load the second."""
    return raw_pdf(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>",
            f"<< /Type /Page /Parent 2 0 R {PAGE} /Contents 4 0 R "
            "/Resources << /Font << /F1 5 0 R >> >> >>".encode(),
            _stream(_text("Text")),
            HELVETICA,
        ],
    )


def cut_short_pdf(path: Path, *, pages: int = 3) -> Path:
    """A text PDF laid out like a linearized file (catalog, page tree and pages first,
    with a trailer, then the content streams) and cut short before its first content
    stream: pdfium repairs it into ``pages`` pages with nothing on them."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    font = 3 + pages
    for i in range(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R {PAGE} /Contents {font + 1 + i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
    objects.append(HELVETICA)
    for i in range(pages):
        text = zlib.compress(_text(f"Page {i + 1} of an agreement effective 2024-03-01"))
        objects.append(_stream(text, "/Filter /FlateDecode "))
    return raw_pdf(path, objects, early_trailer=True, cut_at=font + 1)


def blank_pdf(path: Path, *, pages: int = 2) -> Path:
    """A well-formed PDF whose pages paint nothing."""
    return _pages_pdf(path, [b""] * pages, "<< >>")


# Image-only PDFs ---------------------------------------------------------------------------


SCAN_WIDTH, SCAN_HEIGHT = 400, 120


def _scanned_line() -> bytes:
    """A "scanned" line of text, 1 bit per pixel, as CCITT Group 4 (T.6) data (libtiff's
    encoder): bars of ink where words would be. T.6 codes runs of 1 bits as black."""
    from PIL import Image, ImageDraw, TiffImagePlugin

    ink = Image.new("1", (SCAN_WIDTH, SCAN_HEIGHT), 0)
    draw = ImageDraw.Draw(ink)
    x = 10
    for word in (5, 9, 3, 7, 6, 11, 4):
        draw.rectangle([x, 40, x + word * 6, 70], fill=1)
        x += word * 6 + 14
    buffer = io.BytesIO()
    ink.save(buffer, format="TIFF", compression="group4")
    tiff = Image.open(io.BytesIO(buffer.getvalue()))
    assert isinstance(tiff, TiffImagePlugin.TiffImageFile)
    offset, length = tiff.tag_v2[273][0], tiff.tag_v2[279][0]  # one strip
    return buffer.getvalue()[offset : offset + length]


def _image_pdf(path: Path, xobject: bytes, width: int, height: int) -> Path:
    draw = f"q {width} 0 0 {height} 100 500 cm /Im1 Do Q".encode()
    return _pages_pdf(path, [draw], "<< /XObject << /Im1 5 0 R >> >>", [xobject])


def ccitt_pdf(path: Path) -> Path:
    """A page that is one CCITT Group 4 image, as fax machines and office scanners write."""
    width, height = SCAN_WIDTH, SCAN_HEIGHT
    xobject = _stream(
        _scanned_line(),
        f"/Type /XObject /Subtype /Image /Width {width} /Height {height} "
        "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode "
        f"/DecodeParms << /K -1 /Columns {width} /Rows {height} /BlackIs1 false >> ",
    )
    return _image_pdf(path, xobject, width, height)


def _segment(number: int, kind: int, data: bytes) -> bytes:
    # Segment header (ITU T.88, 7.2): number, flags (type), no referred-to segments,
    # page 1, data length.
    return struct.pack(">IBBBI", number, kind, 0, 1, len(data)) + data


def jbig2_pdf(path: Path) -> Path:
    """A page that is one JBIG2 image, as scanners' "high compression" modes write: an
    embedded stream with a page information segment and an immediate generic region
    coded with MMR (the T.6 coding of CCITT Group 4)."""
    width, height = SCAN_WIDTH, SCAN_HEIGHT
    # Page information (type 48): size, 0 resolution, flags: default pixel 0, no striping.
    page = _segment(0, 48, struct.pack(">IIIIBH", width, height, 0, 0, 0, 0))
    # Immediate lossless generic region (type 39): region info, then flags (MMR = 1).
    region = struct.pack(">IIIIB", width, height, 0, 0, 0) + b"\x01" + _scanned_line()
    data = page + _segment(1, 39, region)
    xobject = _stream(
        data,
        f"/Type /XObject /Subtype /Image /Width {width} /Height {height} "
        "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode ",
    )
    return _image_pdf(path, xobject, width, height)


def inline_image_pdf(path: Path, *, width: int = 600, height: int = 300) -> Path:
    """A page that is one large inline image (BI ... ID ... EI in the content stream, 180
    KB of grey samples), as some scanning software writes."""
    samples = bytes((x * 7 + y * 3) % 256 for y in range(height) for x in range(width))
    content = (
        f"q {width / 2} 0 0 {height / 2} 72 400 cm\n".encode()
        + f"BI /W {width} /H {height} /BPC 8 /CS /G ID ".encode()
        + samples
        + b"\nEI Q"
    )
    return _pages_pdf(path, [content], "<< >>")


# A stroke font for outlined text: each letter a list of polylines in a 4 x 6 box.
_STROKES: dict[str, list[list[tuple[float, float]]]] = {
    "I": [[(2, 0), (2, 6)], [(1, 0), (3, 0)], [(1, 6), (3, 6)]],
    "N": [[(0, 0), (0, 6), (4, 0), (4, 6)]],
    "V": [[(0, 6), (2, 0), (4, 6)]],
    "O": [[(0, 0), (0, 6), (4, 6), (4, 0), (0, 0)]],
    "C": [[(4, 0), (0, 0), (0, 6), (4, 6)]],
    "E": [[(4, 0), (0, 0), (0, 6), (4, 6)], [(0, 3), (3, 3)]],
}


def outlined_text_pdf(path: Path, *, word: str = "INVOICE", lines: int = 12) -> Path:
    """Text drawn as vector paths, as "convert text to outlines" in a typesetter leaves
    it: no font, no characters, only filled and stroked paths where the words are."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(path), pagesize=A4, invariant=True)
    page.setLineWidth(1.2)
    for line in range(lines):
        for i, letter in enumerate(word * 3):
            x, y, scale = 72 + i * 20, 760 - line * 30, 3.0
            for stroke in _STROKES[letter]:
                outline = page.beginPath()
                outline.moveTo(x + stroke[0][0] * scale, y + stroke[0][1] * scale)
                for px, py in stroke[1:]:
                    outline.lineTo(x + px * scale, y + py * scale)
                page.drawPath(outline, stroke=1, fill=0)
    page.showPage()
    page.save()
    return path


def _png_header(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def docx_with_image_bomb(folder: Path, *, pixels: tuple[int, int] = (20_000, 20_000)) -> Path:
    """A DOCX whose one picture declares ``pixels`` (400 million: more than twice Pillow's
    limit) in a 60-byte PNG."""
    from docx import Document
    from PIL import Image

    picture = io.BytesIO()
    Image.new("L", (20, 20), 128).save(picture, "PNG")
    document = Document()
    document.add_paragraph("A report with a picture")
    document.add_picture(picture)
    document.save(str(folder / "plain.docx"))
    path = folder / "bomb.docx"
    with zipfile.ZipFile(folder / "plain.docx") as source, zipfile.ZipFile(path, "w") as out:
        for info in source.infolist():
            media = "/media/" in info.filename
            out.writestr(info, _png_header(*pixels) if media else source.read(info))
    return path


# OOXML packages with two entries for one part name -----------------------------------------


def with_duplicate_entry(
    path: Path, source: Path, part: str, body: bytes, *, as_name: str = ""
) -> Path:
    """``source`` with one more entry for ``part`` holding ``body``, named ``as_name``
    (``part`` itself by default). Python's zipfile reads the later entry of a name,
    other readers the first. ``as_name`` may be another name for the same part: another
    case (OPC part names are case-insensitive), or ``part`` followed by a NUL and more
    (zipfile ends a name at its first NUL)."""
    import warnings

    name = as_name or part
    written = name.replace("\0", "\x01")  # zipfile would cut the name at the NUL
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as package:
        for info in original.infolist():
            package.writestr(info, original.read(info), compress_type=zipfile.ZIP_DEFLATED)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns: "Duplicate name"
            package.writestr(written, body, compress_type=zipfile.ZIP_DEFLATED)
    if written != name:  # the name as stored, in the local header and the directory
        path.write_bytes(path.read_bytes().replace(written.encode(), name.encode()))
    return path


# OOXML archives damaged where zipfile fails with other errors than BadZipFile ---------------


def entry_before_the_start(path: Path, source: Path) -> Path:
    """``source`` with bytes cut from its first entry's data: the central directory's
    offsets now point before the start of the file, where zipfile cannot seek."""
    data = source.read_bytes()
    with zipfile.ZipFile(source) as archive:
        first = archive.infolist()[0]
    middle = first.header_offset + 30 + len(first.filename) + first.compress_size // 2
    path.write_bytes(data[: middle - 8] + data[middle:])
    return path


def name_not_utf8(path: Path, source: Path) -> Path:
    """``source`` with one more entry whose name is flagged UTF-8 but is not."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as package:
        for info in original.infolist():
            package.writestr(info, original.read(info))
        package.writestr("docProps/caf\u00e9.xml", b"<a/>")  # zipfile flags it UTF-8
    path.write_bytes(path.read_bytes().replace("caf\u00e9".encode(), b"caf\xc3\x28"))
    return path


def damaged_compressed_entry(path: Path, source: Path, compression: int) -> Path:
    """``source`` rewritten with ``compression`` (bzip2 or LZMA, which zipfile reads),
    its largest entry's compressed data damaged."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w", compression) as package:
        for info in original.infolist():
            package.writestr(info.filename, original.read(info))
    with zipfile.ZipFile(path) as archive:
        largest = max(archive.infolist(), key=lambda info: info.compress_size)
    data = bytearray(path.read_bytes())
    start = largest.header_offset + 30 + len(largest.filename) + len(largest.extra)
    for at in range(start + 8, start + 24):
        data[at] ^= 0x5A
    path.write_bytes(bytes(data))
    return path
