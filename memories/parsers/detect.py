"""What a file's bytes are, whatever its name says: a signature (PDF, the zip-based Office, OpenDocument
and EPUB formats, OLE compound files, RTF, images), else a text sniff (HTML or plain text); other
binary data is named from puremagic's table of signatures."""

from __future__ import annotations

import io
import re
import struct
import zipfile
from dataclasses import dataclass

from memories.parsers.text import looks_like_text

# A PDF reader accepts the header anywhere in the first KB (a mail gateway or a scanner may put bytes
# before it).
PDF_HEADER_WINDOW = 1024
OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


@dataclass(frozen=True)
class Kind:
    """What the bytes are. `media_type` picks the format that declares it among its media_types;
    `label` says it in messages ("this .docx file is really a PDF"). A textual kind is text whose
    flavour (plain, Markdown, source code, HTML) the extension may choose. A generic kind (a zip or
    OLE file of no known format, unknown binary) leaves the file to the format its name asks for, so
    that format can say what is wrong with it."""

    media_type: str
    label: str
    textual: bool = False
    generic: bool = False
    refusal: str = ""


PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"
EPUB = "application/epub+zip"
DOC = "application/msword"
XLS = "application/vnd.ms-excel"
PPT = "application/vnd.ms-powerpoint"
RTF = "application/rtf"
HTML = "text/html"
TEXT = "text/plain"

# The label of every media type detection gives, and of the formats' own (for the supported list).
LABELS = {
    PDF: "a PDF",
    DOCX: "a Word document (.docx)",
    XLSX: "an Excel workbook (.xlsx)",
    PPTX: "a PowerPoint presentation (.pptx)",
    ODT: "an OpenDocument text (.odt)",
    ODS: "an OpenDocument spreadsheet (.ods)",
    ODP: "an OpenDocument presentation (.odp)",
    EPUB: "an EPUB book",
    DOC: "a Word 97-2003 document (.doc)",
    XLS: "an Excel 97-2003 workbook (.xls)",
    PPT: "a PowerPoint 97-2003 presentation (.ppt)",
    RTF: "an RTF document",
    HTML: "an HTML page",
    TEXT: "plain text",
    "image/png": "a PNG image",
    "image/jpeg": "a JPEG image",
    "image/tiff": "a TIFF image",
    "image/webp": "a WebP image",
    "image/gif": "a GIF image",
    "image/bmp": "a BMP image",
    "application/zip": "a zip archive",
    "application/x-ole-storage": "an OLE compound file",
}

# How the list of supported types names a format, by its first media type.
NAMES = {
    PDF: "PDF",
    DOCX: "Word .docx",
    XLSX: "Excel .xlsx",
    PPTX: "PowerPoint .pptx",
    ODT: "OpenDocument .odt",
    ODS: "OpenDocument .ods",
    ODP: "OpenDocument .odp",
    EPUB: "EPUB",
    DOC: "Word .doc",
    XLS: "Excel .xls",
    PPT: "PowerPoint .ppt",
    RTF: "RTF",
    HTML: "HTML",
    TEXT: "text",
    "text/csv": "CSV",
    "image/png": "images",
}

ENCRYPTED_OFFICE = (
    "the file is password-protected (an encrypted Office document); remove the password and upload it again"
)

_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)
# The main part's folder of each Office Open XML format, transitional and strict alike.
_OOXML_FOLDERS = (("word/", DOCX), ("xl/", XLSX), ("ppt/", PPTX))
# OpenDocument and EPUB say what they are in a first member named "mimetype".
_ZIP_MIMETYPES = {ODT, ODS, ODP, EPUB, "application/vnd.oasis.opendocument.text-template"}
# OLE streams that say which program wrote the file; an encrypted OOXML file is an OLE file too.
_OLE_STREAMS = (
    ("EncryptedPackage", ""),
    ("WordDocument", DOC),
    ("Workbook", XLS),
    ("Book", XLS),
    ("PowerPoint Document", PPT),
)
_HTML_START = re.compile(
    r"\A\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*(?:<!doctype\s+html|<html[\s>])", re.IGNORECASE | re.DOTALL
)


def kind(media_type: str, **flags) -> Kind:
    return Kind(media_type, LABELS.get(media_type, media_type), **flags)


def detect(data: bytes, ext: str = "") -> Kind:
    """What `data` is, from its content alone (the extension only helps to name unknown binary data)."""
    head = data[:PDF_HEADER_WINDOW]
    if _is_pdf(data, head):
        return kind(PDF)
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _zip_kind(data)
    if data.startswith(OLE_SIGNATURE):
        return _ole_kind(data)
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        return kind(RTF)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return kind("image/webp")
    for signature, media_type in _IMAGES:
        if data.startswith(signature) and (media_type != "image/bmp" or _is_bmp(data)):
            return kind(media_type)
    if looks_like_text(data):
        sample = data[:4096].decode("utf-8", errors="ignore").lstrip("\ufeff")
        return kind(HTML if _HTML_START.match(sample) else TEXT, textual=True)
    return Kind("application/octet-stream", _binary_label(data, ext), generic=True)


def _is_pdf(data: bytes, head: bytes) -> bool:
    """A PDF header at the start, or later in the first KB of a file that ends like a PDF (so that a
    note or a script that mentions "%PDF-1.7" near its top stays text)."""
    at = head.find(b"%PDF-")
    return at == 0 or (at > 0 and b"%%EOF" in data[-1024:])


def _zip_kind(data: bytes) -> Kind:
    """A zip archive's format, from its member names (the central directory, nothing inflated)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            declared = _declared_mimetype(archive, names)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError):
        return kind("application/zip", generic=True)
    if declared in _ZIP_MIMETYPES:
        return kind(ODT if declared.startswith(ODT) else declared)
    if "EncryptionInfo" in names and "EncryptedPackage" in names:
        return kind("application/zip", refusal=ENCRYPTED_OFFICE)
    if "[Content_Types].xml" in names:
        for folder, media_type in _OOXML_FOLDERS:
            if any(name.startswith(folder) for name in names):
                return kind(media_type)
    return kind("application/zip", generic=True)


def _declared_mimetype(archive: zipfile.ZipFile, names: list[str]) -> str:
    if "mimetype" not in names or archive.getinfo("mimetype").file_size > 200:
        return ""
    try:
        with archive.open("mimetype") as member:
            return member.read(200).decode("ascii", errors="replace").strip()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError, RuntimeError):
        return ""


def _ole_kind(data: bytes) -> Kind:
    """An OLE compound file's format, from the names of its streams."""
    folded = data.lower()  # entry names compare without case
    for name, media_type in _OLE_STREAMS:
        if _has_ole_entry(data, folded, name):
            if not media_type:
                return kind("application/x-ole-storage", refusal=ENCRYPTED_OFFICE)
            return kind(media_type)
    return kind("application/x-ole-storage", generic=True)


def _has_ole_entry(data: bytes, folded: bytes, name: str) -> bool:
    """Whether the file's directory has an entry named `name`. Directory entries are 128 bytes long
    and start on a 128-byte boundary after the 512-byte header, with the name in UTF-16 and its length
    (in bytes, with the terminating NUL) at offset 64; finding them so needs no walk of the sector
    chains."""
    encoded = name.lower().encode("utf-16-le") + b"\x00\x00"
    length = struct.pack("<H", len(encoded))
    position = folded.find(encoded, 512)
    while position != -1:
        if position % 128 == 0 and data[position + 64 : position + 66] == length:
            return True
        position = folded.find(encoded, position + 1)
    return False


def _is_bmp(data: bytes) -> bool:
    """BM is also how text can start: a bitmap's header also gives its own file size and a pixel offset."""
    if len(data) < 26:
        return False
    size, _, offset = struct.unpack("<IIi", data[2:14])
    return size in (0, len(data)) or 14 <= offset < len(data)


def _binary_label(data: bytes, ext: str) -> str:
    """ "binary data", with what puremagic's signatures say it is when they know (of the signatures
    that fit, the one of the file's extension first)."""
    import puremagic

    try:
        matches = puremagic.magic_string(data, filename=f"file.{ext}" if ext else None)
    except (puremagic.PureError, ValueError):
        return "binary data"
    if matches and matches[0].confidence >= 0.3 and matches[0].name:
        return f"binary data ({matches[0].name})"
    return "binary data"
