"""Real files made in the tests: PDFs (with and without text, encrypted), DOCX, zip bombs."""

from __future__ import annotations

import io
import zipfile


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str]) -> bytes:
    """A valid PDF with one Helvetica text line per input line, one page per item."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * i for i in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, text in enumerate(pages):
        lines = text.splitlines() or [""]
        ops = ["BT", "/F1 11 Tf", "14 TL", "50 780 Td"]
        for line in lines:
            ops.append(f"({_escape(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents {page_ids[i] + 1} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def make_blank_pdf() -> bytes:
    """A PDF whose page has no text layer, like a scan."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=612, height=842)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_encrypted_pdf(text: str = "Top secret plans") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([text]))))
    writer.encrypt(user_password="open-sesame", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Quarterly plan", level=1)
    document.add_paragraph("Engineering will focus on reliability this quarter.")
    document.add_heading("Budget", level=2)
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Cost"
    table.cell(1, 0).text, table.cell(1, 1).text = "Servers", "1200"
    document.add_paragraph("Closing remarks after the table.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_docx_zip_bomb(inflated_mb: int = 40) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * (1024 * 1024)
            for _ in range(inflated_mb):
                member.write(block)
    return out.getvalue()


# Files no upload may turn into a memory, with (part of) the reason the person is given.
BAD_FILES = [
    ("empty.txt", b"", "the file is empty"),
    ("binary.txt", bytes(range(256)) * 40, "looks binary"),
    ("truncated.pdf", make_pdf(["Some text here."])[:120], "damaged or truncated"),
    ("not-a.pdf", b"This is not a PDF at all, just text.", "not a PDF"),
    ("locked.pdf", make_encrypted_pdf(), "encrypted"),
    ("scan.pdf", make_blank_pdf(), "no extractable text"),
    ("broken.docx", b"PK not really a zip", "not a zip archive"),
    ("bomb.docx", make_docx_zip_bomb(), "zip bomb"),
    ("tool.exe", b"MZ\x90\x00", ".exe is not a supported file type"),
    ("../escape.txt", b"data", "path separator"),
    ("..secret..txt", b"data", "'..'"),
    ("tab\tname.txt", b"data", "control characters"),
    ("y" * 300 + ".txt", b"data", "the limit is 255"),
]
