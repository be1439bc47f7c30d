"""Generators for the parse tests and the parse bench: real documents of every supported
format, and hostile ones (damaged, disguised, encrypted, bombs).

Each generator writes one file and returns its path. Documents are built with the
libraries docling itself reads them with (python-docx, python-pptx, openpyxl) or with
reportlab and pypdf for PDFs, so the bytes are what real tools produce.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

TEXT = (
    "This agreement is effective from 2024-03-01 and replaces the version signed on "
    "2023-11-15. Either party may terminate it with thirty days of written notice."
)


def docx(path: Path, *, pages: int = 2, paragraphs_per_page: int = 8, tables: bool = True) -> Path:
    from docx import Document
    from docx.enum.text import WD_BREAK

    document = Document()
    document.add_heading("Master services agreement", level=1)
    for page in range(pages):
        document.add_heading(f"Section {page + 1}", level=2)
        for i in range(paragraphs_per_page):
            document.add_paragraph(f"{page + 1}.{i + 1} {TEXT}")
        document.add_paragraph("A list item", style="List Bullet")
        if tables:
            table = document.add_table(rows=3, cols=3)
            for r, row in enumerate(table.rows):
                for c, cell in enumerate(row.cells):
                    cell.text = "Header" if r == 0 else f"r{r}c{c}"
        document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    document.save(str(path))
    return path


def pptx(path: Path, *, slides: int = 3) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for i in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide {i + 1}"
        slide.placeholders[1].text = TEXT
        box = slide.shapes.add_textbox(Inches(1), Inches(5), Inches(6), Inches(1))
        box.text_frame.text = f"Footnote on slide {i + 1}"
    deck.save(str(path))
    return path


def xlsx(path: Path, *, sheets: int = 2, rows: int = 5) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    for s in range(sheets):
        sheet = book.active if s == 0 else book.create_sheet()
        sheet.title = f"Sheet{s + 1}"
        sheet.append(["Item", "Effective", "Amount"])
        for r in range(rows):
            sheet.append([f"item {r}", "2024-03-01", r * 10])
    book.save(str(path))
    return path


def html(path: Path) -> Path:
    path.write_text(
        "<!DOCTYPE html><html><head><title>Notice</title></head><body>"
        f"<h1>Notice</h1><p>{TEXT}</p><ul><li>first</li><li>second</li></ul>"
        "<table><tr><th>Item</th><th>Date</th></tr><tr><td>a</td><td>2024-03-01</td></tr>"
        "</table></body></html>",
        encoding="utf-8",
    )
    return path


def markdown(path: Path) -> Path:
    path.write_text(
        f"# Notice\n\n{TEXT}\n\n## Terms\n\n- first\n- second\n\n"
        "| Item | Date |\n|---|---|\n| a | 2024-03-01 |\n",
        encoding="utf-8",
    )
    return path


def pdf(path: Path, *, pages: int = 3, text: bool = True, image: bool = False) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(path), pagesize=A4, invariant=True)
    for n in range(pages):
        if text:
            page.drawString(72, 760, f"Section {n + 1}")
            for line in range(20):
                page.drawString(72, 730 - 14 * line, f"{n + 1}.{line + 1} {TEXT[:80]}")
        if image:
            from PIL import Image

            picture = Image.new("RGB", (400, 200), (200, 30, 30))
            page.drawImage(ImageReader(picture), 72, 400, 400, 200)
        page.showPage()
    page.save()
    return path


def pdf_with_lines(path: Path, lines: list[str]) -> Path:
    """One page, each line a paragraph of its own (far enough apart to stay apart)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(path), pagesize=A4, invariant=True)
    for n, line in enumerate(lines):
        page.drawString(72, 760 - 28 * n, line)
    page.showPage()
    page.save()
    return path


def page_pdf(path: Path, *, pages: int, tables: bool = False) -> Path:
    """The standard pipeline's measuring documents (bench/standard_pipeline.py): a heading a
    page, then 40 lines of running text or, with ``tables``, a ruled 16 x 5 table of short
    cells."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(path), pagesize=A4, invariant=True)
    for n in range(1, pages + 1):
        page.setFont("Helvetica-Bold", 14)
        page.drawString(72, 780, f"{n}. Section {n}")
        page.setFont("Helvetica", 10)
        if not tables:
            for line in range(40):
                page.drawString(
                    72,
                    750 - 16 * line,
                    f"Line {line + 1} of page {n}: the parties agree that the terms "
                    "apply from the effective date until termination.",
                )
        else:
            left, top, width, height = 72, 740, 90, 22
            for row in range(17):
                page.line(left, top - row * height, left + 5 * width, top - row * height)
            for col in range(6):
                page.line(left + col * width, top, left + col * width, top - 16 * height)
            for row in range(16):
                for col in range(5):
                    text = "Item" if row == 0 else f"{n}.{row}.{col} {100 * row + col} EUR"
                    page.drawString(left + col * width + 4, top - row * height - 15, text)
        page.showPage()
    page.save()
    return path


def encrypted_pdf(path: Path) -> Path:
    from pypdf import PdfWriter

    plain = pdf(path.with_name("plain-" + path.name))
    writer = PdfWriter(clone_from=plain)
    writer.encrypt(user_password="secret", owner_password="owner")
    writer.write(path)
    return path


def truncated(path: Path, source: Path, keep: float = 0.5) -> Path:
    data = source.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def random_bytes(path: Path, size: int = 20_000) -> Path:
    path.write_bytes(os.urandom(size))
    return path


def _ooxml_skeleton(archive: zipfile.ZipFile) -> None:
    archive.writestr(
        "[Content_Types].xml",
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    )


def zip_bomb_ratio(path: Path, unpacked_mb: int = 64) -> Path:
    """One highly compressible part: about 1,000:1, as deflate bombs are."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        _ooxml_skeleton(archive)
        archive.writestr("word/document.xml", b"\0" * (unpacked_mb << 20))
    return path


def zip_bomb_entries(path: Path, entries: int = 20_000) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        _ooxml_skeleton(archive)
        for i in range(entries):
            archive.writestr(f"word/media/p{i}.xml", b"<a/>")
    return path


def xml_entity_expansion(path: Path, source: Path) -> Path:
    """A real DOCX whose main part carries a "billion laughs" DTD."""
    laughs = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
    ]
    dtd = f"<!DOCTYPE w:document [{''.join(laughs)}]>".encode()
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as bomb:
        for info in original.infolist():
            data = original.read(info)
            if info.filename == "word/document.xml":
                declaration_end = data.index(b"?>") + 2
                data = data[:declaration_end] + dtd + data[declaration_end:]
                data = data.replace(b"<w:t>", b"<w:t>&lol9;", 1)
            bomb.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def pdf_with_broken_page(path: Path, *, pages: int = 5, broken: int = 2) -> Path:
    """A PDF whose page ``broken`` (1-based) has an empty media box: pdfium opens the
    file, docling fails that one page and converts the rest (PARTIAL_SUCCESS)."""
    from pypdf import PdfWriter
    from pypdf.generic import ArrayObject, NameObject, NumberObject

    writer = PdfWriter(clone_from=pdf(path.with_name("whole-" + path.name), pages=pages))
    writer.pages[broken - 1][NameObject("/MediaBox")] = ArrayObject([NumberObject(0)] * 4)
    writer.write(path)
    return path


# ZIP entries encrypted with the traditional PKWARE cipher ("ZipCrypto"), as `zip -e` and
# most archivers write them. zipfile can read these but not write them.
def _crc_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


class _ZipCrypto:
    def __init__(self, password: bytes) -> None:
        self.keys = [0x12345678, 0x23456789, 0x34567890]
        for byte in password:
            self._update(byte)

    def _update(self, byte: int) -> None:
        k0, k1, k2 = self.keys
        k0 = (k0 >> 8) ^ _CRC_TABLE[(k0 ^ byte) & 0xFF]
        k1 = ((k1 + (k0 & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        k2 = (k2 >> 8) ^ _CRC_TABLE[(k2 ^ (k1 >> 24)) & 0xFF]
        self.keys = [k0, k1, k2]

    def encrypt(self, data: bytes) -> bytes:
        out = bytearray()
        for byte in data:
            temp = (self.keys[2] | 2) & 0xFFFF
            out.append(byte ^ (((temp * (temp ^ 1)) >> 8) & 0xFF))
            self._update(byte)
        return bytes(out)


def encrypted_entries(path: Path, source: Path, password: bytes = b"secret") -> Path:
    """``source`` (an OOXML archive) re-packed with every entry password-protected: the
    encryption flag set, the data deflated then ZipCrypto-encrypted."""
    import struct
    import zlib

    with zipfile.ZipFile(source) as original:
        entries = [(info.filename, original.read(info)) for info in original.infolist()]
    local, central = bytearray(), bytearray()
    dos_time, dos_date = 0, (2024 - 1980) << 9 | 3 << 5 | 1
    for name, data in entries:
        crc = zlib.crc32(data)
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        deflated = packer.compress(data) + packer.flush()
        # 12-byte header: 11 filler bytes, then the CRC's high byte (the password check).
        sealed = _ZipCrypto(password).encrypt(bytes(11) + bytes([crc >> 24]) + deflated)
        encoded = name.encode()
        offset = len(local)
        fields = (20, 0x0001, zipfile.ZIP_DEFLATED, dos_time, dos_date, crc, len(sealed))
        local += struct.pack("<IHHHHHIII", 0x04034B50, *fields, len(data))
        local += struct.pack("<HH", len(encoded), 0) + encoded + sealed
        central += struct.pack("<IHHHHHHIII", 0x02014B50, 20, *fields, len(data))
        central += struct.pack("<HHHHHII", len(encoded), 0, 0, 0, 0, 0, offset) + encoded
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(local), 0
    )
    path.write_bytes(bytes(local + central + end))
    return path


def sparse_xlsx(path: Path, far_cell: str = "XFD1048576") -> Path:
    """A few real cells at the top left and one more at ``far_cell``: a 5 KB workbook
    whose used range spans up to the whole sheet (17 billion cells at XFD1048576)."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["Item", "Amount"])
    sheet.append(["a", 1])
    sheet[far_cell] = "far"
    book.save(str(path))
    return path


def xlsx_with_sheet_xml(path: Path, sheet_data: str, *, after: str = "") -> Path:
    """A minimal workbook whose one worksheet holds ``sheet_data`` (inside <sheetData>)
    and ``after`` (merged cells, hyperlinks) verbatim: for cell layouts that openpyxl
    would never write (cells without r attributes, references written as character
    references)."""
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    package = "http://schemas.openxmlformats.org/package/2006/relationships"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.'
            'openxmlformats-package.relationships+xml"/><Default Extension="xml" '
            'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.'
            'sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType='
            '"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            "</Types>",
        )
        archive.writestr(
            "_rels/.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{package}"><Relationship Id="rId1" '
            f'Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        )
        archive.writestr(
            "xl/workbook.xml",
            f'<?xml version="1.0"?><workbook xmlns="{ns}" xmlns:r="{rel}"><sheets>'
            '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        archive.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{package}"><Relationship Id="rId1" '
            f'Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        archive.writestr(
            "xl/worksheets/sheet1.xml",
            f'<?xml version="1.0"?><worksheet xmlns="{ns}" xmlns:r="{rel}"><sheetData>'
            f"{sheet_data}</sheetData>{after}</worksheet>",
        )
    return path


# Long documents for page-range shards ----------------------------------------------------

_CLAUSES = (
    "The supplier delivers the services described in the schedule",
    "either party may terminate this agreement with thirty days of written notice",
    "the price is reviewed every year on the anniversary of the start date",
    "invoices are payable within 45 days of receipt",
    "this amendment is effective from 2024-03-01 and replaces the version signed on 2023-11-15",
    "obligations survive termination for a period of two years",
)


def long_pdf(path: Path, *, pages: int, seed: int = 0) -> Path:
    """A ``pages``-page agreement whose blocks run over page breaks: headings in a larger
    font, paragraphs of several wrapped lines, bulleted lists and table rows in columns,
    laid out line by line so that a page ends wherever a block happens to be. A running
    footer numbers each page. Deterministic for a given ``seed``."""
    import random

    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    rng = random.Random(seed)
    page = canvas.Canvas(str(path), pagesize=A4, invariant=True)
    top, bottom, leading = 780.0, 72.0, 14.0
    state = {"page": 1, "y": top}

    def blocks():
        section = 0
        while True:
            section += 1
            yield ("Helvetica-Bold", 14, 72, f"{section}. Clause {section}")
            for _ in range(rng.randint(1, 3)):
                words = " ".join(rng.choice(_CLAUSES) for _ in range(rng.randint(2, 5))).split()
                line: list[str] = []
                for word in words:
                    if len(" ".join([*line, word])) > 80:
                        yield ("Helvetica", 10, 72, " ".join(line))
                        line = []
                    line.append(word)
                yield ("Helvetica", 10, 72, " ".join(line) + ".")
            kind = rng.choice(("list", "table", "none"))
            if kind == "list":
                for item in range(rng.randint(2, 6)):
                    yield (
                        "Helvetica",
                        10,
                        90,
                        f"\u2022 item {section}.{item + 1}: {rng.choice(_CLAUSES)}",
                    )
            elif kind == "table":
                yield ("Helvetica-Bold", 10, 72, "Item")
                for row in range(rng.randint(2, 8)):
                    yield ("Helvetica", 10, 72, f"row {section}.{row + 1}")
                    yield ("Helvetica", 10, 250, f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}")
                    yield ("Helvetica", 10, 400, f"{rng.randint(1, 999)} EUR")

    def footer() -> None:
        page.setFont("Helvetica", 8)
        page.drawString(280, 40, f"Page {state['page']} of {pages}")

    for font, size, x, text in blocks():
        # Table cells after the first of a row share its baseline.
        same_row = x > 90
        if not same_row:
            state["y"] -= leading
        if state["y"] < bottom:
            footer()
            if state["page"] == pages:
                break
            page.showPage()
            state["page"] += 1
            state["y"] = top
        page.setFont(font, size)
        page.drawString(x, state["y"], text)
    page.save()
    return path


def docx_bytes(paragraphs: list[str], *, tables: int = 0) -> bytes:
    """A DOCX with a heading, these paragraphs and, when asked, ``tables`` 3x3 tables
    spread among them."""
    from docx import Document

    doc = Document()
    doc.add_heading("Report", level=1)
    for i, text in enumerate(paragraphs):
        doc.add_paragraph(text)
        if tables and i % max(1, len(paragraphs) // tables) == 0:
            table = doc.add_table(rows=3, cols=3)
            for r, row in enumerate(table.rows):
                for c, cell in enumerate(row.cells):
                    cell.text = f"r{r}c{c}" if r else f"Col {c}"
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()
