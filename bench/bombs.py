"""Hostile compressed files for the parser's limits: zip bombs as .docx (honest and lying sizes) and a
PDF whose stream inflates far past its size. Built by streaming, so making one costs little memory."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

_CONTENT_TYPES = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    b'<Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    b'officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    b'officeDocument" Target="word/document.xml"/></Relationships>'
)
_DOC_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.'
    b'openxmlformats.org/wordprocessingml/2006/main"><w:body>'
)
_PARAGRAPH = b"<w:p><w:r><w:t>all work and no play makes jack a dull boy</w:t></w:r></w:p>"
_DOC_TAIL = b"</w:body></w:document>"


def docx_bomb(*, inflated_mb: int = 196, padding_mb: int = 1) -> bytes:
    """A .docx whose document.xml inflates to about `inflated_mb` MB (sizes declared honestly), padded
    with a stored entry of `padding_mb` MB, as in the report: the file is small, its text is huge."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        block = _PARAGRAPH * (1024 * 1024 // len(_PARAGRAPH))
        info = zipfile.ZipInfo("word/document.xml")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as member:
            member.write(_DOC_HEAD)
            for _ in range(inflated_mb):
                member.write(block)
            member.write(_DOC_TAIL)
        if padding_mb:
            archive.writestr(
                zipfile.ZipInfo("word/media/padding.bin"),
                bytes(padding_mb * 1024 * 1024),
                compress_type=zipfile.ZIP_STORED,
            )
    return out.getvalue()


def docx_lying_sizes(*, inflated_mb: int = 200, claimed: int = 1000) -> bytes:
    """A .docx whose document.xml really inflates to `inflated_mb` MB while its local header and the
    central directory both claim `claimed` bytes."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = _PARAGRAPH * (1024 * 1024 // len(_PARAGRAPH))
    crc = zlib.crc32(_DOC_HEAD)
    stream = [compressor.compress(_DOC_HEAD)]
    for _ in range(inflated_mb):
        stream.append(compressor.compress(block))
        crc = zlib.crc32(block, crc)
    stream.append(compressor.compress(_DOC_TAIL))
    crc = zlib.crc32(_DOC_TAIL, crc)
    stream.append(compressor.flush())
    deflated = b"".join(stream)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
    head = out.getvalue()
    # Append document.xml by hand: local header + data, then rebuild the central directory.
    with zipfile.ZipFile(io.BytesIO(head)) as archive:
        entries = archive.infolist()
    central_start = min(entry.header_offset for entry in entries) + sum(
        30 + len(entry.filename.encode()) + len(entry.extra) + entry.compress_size for entry in entries
    )
    body = bytearray(head[:central_start])
    name = b"word/document.xml"
    offset = len(body)
    body += (
        struct.pack(
            "<4s2B4HL2L2H",
            b"PK\x03\x04",
            20,
            0,
            0,
            zipfile.ZIP_DEFLATED,
            0,
            0,
            crc,
            min(len(deflated), claimed),
            claimed,
            len(name),
            0,
        )
        + name
        + deflated
    )
    directory = bytearray()
    records = [
        (e.filename.encode(), e.CRC, e.compress_size, e.file_size, e.header_offset, e.compress_type) for e in entries
    ] + [(name, crc, min(len(deflated), claimed), claimed, offset, zipfile.ZIP_DEFLATED)]
    for filename, record_crc, compressed, size, header_offset, method in records:
        directory += (
            struct.pack(
                "<4s4B4HL2L5H2L",
                b"PK\x01\x02",
                20,
                0,
                20,
                0,
                0,
                method,
                0,
                0,
                record_crc,
                compressed,
                size,
                len(filename),
                0,
                0,
                0,
                0,
                0,
                header_offset,
            )
            + filename
        )
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(records), len(records), len(directory), len(body), 0)
    return bytes(body + directory + end)


def pdf_bomb(*, inflated_mb: int = 200) -> bytes:
    """A one-page PDF whose content stream inflates to about `inflated_mb` MB of text operators."""
    compressor = zlib.compressobj(6)
    line = b"BT /F1 12 Tf 72 712 Td (all work and no play) Tj ET\n"
    block = line * (1024 * 1024 // len(line))
    stream = b"".join([compressor.compress(block) for _ in range(inflated_mb)] + [compressor.flush()])
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>"
        ),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return pdf_from_objects(objects)


def pdf_from_objects(objects: list[bytes]) -> bytes:
    """A PDF file of these objects, numbered from 1 (the first is the catalog), with its xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
