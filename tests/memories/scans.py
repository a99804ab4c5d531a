"""Scans and photos made in the tests: text rendered to an image with Pillow, saved as PNG, JPEG, TIFF,
WebP or an image-only PDF; mixed PDFs (text pages and scanned pages); a PDF whose text layer is a
font's raw codes; an image header declaring 30,000 × 30,000 pixels."""

from __future__ import annotations

import io
import shutil
import struct
import zlib

import pytest

from bench.bombs import pdf_from_objects
from tests.files import make_pdf

PHRASE = "Quarterly invoice for harbour maintenance"
SECOND = "Lighthouse keepers meet every Tuesday"


def _font(size: int):
    from PIL import ImageFont

    for path in (
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    ):
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def text_image(lines: list[str], *, width: int = 1400, size: int = 44):
    """White page, black text: what a 300 dpi scan of a few printed lines looks like."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (width, 120 + len(lines) * size * 2), 255)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((60, 60 + i * size * 2), line, fill=0, font=_font(size))
    return image


def image_bytes(lines: list[str], fmt: str = "PNG", **save) -> bytes:
    out = io.BytesIO()
    text_image(lines).save(out, format=fmt, **save)
    return out.getvalue()


def scanned_pdf(pages: list[list[str]]) -> bytes:
    """A PDF of image pages only, as a scanner writes it (Pillow's PDF writer)."""
    images = [text_image(lines) for lines in pages]
    out = io.BytesIO()
    images[0].save(out, format="PDF", resolution=150, save_all=True, append_images=images[1:])
    return out.getvalue()


def mixed_pdf(text_pages: list[str], scanned_pages: list[list[str]]) -> bytes:
    """Text pages first, then scanned ones."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for source in (make_pdf(text_pages), scanned_pdf(scanned_pages)):
        for page in PdfReader(io.BytesIO(source)).pages:
            writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def raw_code_pdf() -> bytes:
    """A page whose font has glyph names (/g1, /g2…) and no Unicode mapping: its "text" is raw codes."""
    body = b"BT /F1 12 Tf 72 700 Td (" + bytes(range(1, 32)).replace(b"\\", b"").replace(b"\r", b"") + b") Tj ET"
    diffs = " ".join(f"/g{100 + k}" for k in range(1, 40))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(body) + body + b"\nendstream",
        f"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
        f"/Encoding << /Type /Encoding /Differences [1 {diffs}] >> >>".encode(),
    ]
    return pdf_from_objects(objects)


def huge_png_header(width: int = 30_000, height: int = 30_000) -> bytes:
    """A PNG that declares width × height pixels (a decompression bomb's header) with one tiny row."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    )


def titled_pdf(title: str, text: str = "Body text of a titled document.") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([text]))))
    writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted_pdf(*, user_password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(["Minutes of the board meeting"]))))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# Tests that read by OCR (or leave pages for it) need Debian's tesseract (`make system-packages`).
needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")
