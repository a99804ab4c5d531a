"""Real files made in the tests: PDFs (with and without text, encrypted), DOCX, zip bombs, zip
containers and OLE compound files."""

from __future__ import annotations

import io
import struct
import zipfile


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str], *, heading: str | None = None) -> bytes:
    """A valid PDF with one Helvetica text line per input line, one page per item; `heading` is set in
    24 pt above the first page's 11 pt lines, as a title is."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * i for i in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, text in enumerate(pages):
        lines = text.splitlines() or [""]
        ops = ["BT", "/F1 24 Tf", "50 800 Td", f"({_escape(heading)}) Tj", "ET"] if heading and i == 0 else []
        ops += ["BT", "/F1 11 Tf", "14 TL", "50 760 Td"]
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


def make_zip(members: dict[str, bytes | str], *, stored_first: str | None = None) -> bytes:
    """A zip archive of `members`; `stored_first` is written first and uncompressed, as OpenDocument
    and EPUB want their "mimetype" member."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        if stored_first is not None:
            archive.writestr(stored_first, members[stored_first], compress_type=zipfile.ZIP_STORED)
        for name, content in members.items():
            if name != stored_first:
                archive.writestr(name, content)
    return out.getvalue()


def make_ole(streams: dict[str, bytes]) -> bytes:
    """An OLE compound file (version 3, 512-byte sectors) holding `streams` (at most three), each in
    regular sectors (padded to 4 KB): the container of legacy .doc/.xls/.ppt files and of encrypted Office files."""
    assert len(streams) <= 3
    sector = 512
    end_of_chain, free, fat_sector = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
    fat = [fat_sector, end_of_chain]  # sector 0: the FAT itself; sector 1: the directory
    entries = [_ole_entry("Root Entry", 5, child=1 if streams else free, start=end_of_chain, size=0)]
    data = b""
    names = list(streams)
    for index, name in enumerate(names):
        content = streams[name].ljust(4096, b"\x00")  # at the mini-stream cutoff: regular sectors
        content += b"\x00" * (-len(content) % sector)
        first = 2 + len(data) // sector
        count = len(content) // sector
        fat += [first + i + 1 for i in range(count - 1)] + [end_of_chain]
        right = index + 2 if index + 1 < len(names) else free
        entries.append(_ole_entry(name, 2, right=right, start=first, size=max(len(streams[name]), 4096)))
        data += content
    entries += [b"\x00" * 64 + struct.pack("<HBB", 0, 0, 1) + b"\xff" * 12 + b"\x00" * 48] * (4 - len(entries))
    header = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + b"\x00" * 16
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + b"\x00" * 6
        + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, end_of_chain, 0, end_of_chain, 0)
        + struct.pack("<I", 0)
        + struct.pack("<I", free) * 108
    )
    fat_bytes = struct.pack(f"<{len(fat)}I", *fat).ljust(sector, b"\xff")
    return header + fat_bytes + b"".join(entries) + data


def _ole_entry(
    name: str, kind: int, *, start: int, size: int, child: int = 0xFFFFFFFF, right: int = 0xFFFFFFFF
) -> bytes:
    encoded = (name.encode("utf-16-le") + b"\x00\x00").ljust(64, b"\x00")
    return (
        encoded
        + struct.pack("<HBB", len(name.encode("utf-16-le")) + 2, kind, 1)
        + struct.pack("<III", 0xFFFFFFFF, right, child)
        + b"\x00" * 16
        + b"\x00" * 4
        + b"\x00" * 16
        + struct.pack("<IQ", start, size)
    )


# Files no upload may turn into a memory, with (part of) the reason the person is given.
BAD_FILES = [
    ("empty.txt", b"", "the file is empty"),
    ("binary.txt", bytes(range(256)) * 40, "this .txt file is not text: it looks like binary data"),
    ("truncated.pdf", make_pdf(["Some text here."])[:120], "damaged or truncated"),
    ("not-a.pdf", b"\x00\x01\x02 binary, and no PDF header" * 4, "not a PDF"),
    ("locked.pdf", make_encrypted_pdf(), "encrypted"),
    ("scan.pdf", make_blank_pdf(), "no extractable text"),
    ("broken.docx", b"PK\x03\x04 not really a zip", "damaged or cut short"),
    ("bomb.docx", make_docx_zip_bomb(), "zip bomb"),
    ("tool.exe", b"MZ\x90\x00", ".exe is not a supported file type: it looks like binary data"),
    ("../escape.txt", b"data", "path separator"),
    ("..secret..txt", b"data", "'..'"),
    ("tab\tname.txt", b"data", "control characters"),
    ("y" * 300 + ".txt", b"data", "the limit is 255"),
]
