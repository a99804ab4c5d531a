"""File bytes -> text (plain text, markup, code, PDF, DOCX, legacy DOC), with a clear reason when it cannot be done."""

from __future__ import annotations

import hashlib
import io
import mimetypes
import re
import shutil
import struct
import subprocess
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser

MAX_FILENAME_CHARS = 255
# Compressed formats (a .docx is a zip; PDF streams are deflated) are decompressed with a byte budget
# while they are read, never trusting the sizes the file declares: a file may inflate to at most
# MAX_INFLATED_BYTES (the uploads service passes KYBERNESIS_MAX_INFLATED_BYTES, and a budget shared by
# all the files of one request), and a zip member may not inflate more than MAX_INFLATE_RATIO times
# its compressed bytes once past INFLATE_RATIO_FLOOR (text XML compresses about 5-20 times).
MAX_INFLATED_BYTES = 64 * 1024 * 1024
MAX_INFLATE_RATIO = 100
INFLATE_RATIO_FLOOR = 8 * 1024 * 1024
MAX_ZIP_MEMBERS = 5_000
# One PDF content stream holds one page's drawing operators, a few hundred KB even for dense text.
MAX_PDF_STREAM_BYTES = 16 * 1024 * 1024
ANTIWORD_TIMEOUT_S = 60

TEXT_EXTENSIONS = {"txt", "text", "md", "markdown", "rst", "csv", "tsv", "json", "xml", "log", "tex", "org", "adoc"}
HTML_EXTENSIONS = {"html", "htm", "xhtml"}
CODE_EXTENSIONS = {
    "py",
    "pyi",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "java",
    "go",
    "rs",
    "c",
    "h",
    "cpp",
    "cc",
    "cxx",
    "hpp",
    "hh",
    "cs",
    "rb",
    "php",
    "swift",
    "kt",
    "kts",
    "scala",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "sql",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "env",
    "css",
    "scss",
    "sass",
    "less",
    "vue",
    "svelte",
    "lua",
    "pl",
    "pm",
    "r",
    "jl",
    "dart",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "mli",
    "clj",
    "cljs",
    "groovy",
    "gradle",
    "m",
    "mm",
    "f90",
    "proto",
    "graphql",
    "gql",
    "dockerfile",
    "makefile",
    "cmake",
    "bat",
    "vb",
    "fs",
    "elm",
    "nim",
    "zig",
    "v",
    "sol",
    "tf",
    "hcl",
}
DOCUMENT_EXTENSIONS = {"pdf", "docx", "doc"}
SUPPORTED_EXTENSIONS = TEXT_EXTENSIONS | HTML_EXTENSIONS | CODE_EXTENSIONS | DOCUMENT_EXTENSIONS
# Files known by their whole name rather than an extension.
KNOWN_NAMES = {
    "dockerfile": "dockerfile",
    "makefile": "makefile",
    "readme": "txt",
    "license": "txt",
    "changelog": "txt",
    "procfile": "txt",
}


class ExtractionError(ValueError):
    """The file cannot become a memory; the message says why, in words a person understands."""

    status = 422


class DecompressionBombError(ExtractionError):
    """The file would decompress to more than its budget allows (a likely zip bomb): 413."""

    status = 413


class InflateBudget:
    """How many bytes decompressing may still produce. One budget can be shared by all the files of a
    request, so that many small bombs cannot add up; each file also has its own limit."""

    def __init__(self, total: int):
        self.total = total
        self.remaining = total
        self.left_at_file_start = total

    def file_limit(self, per_file: int = MAX_INFLATED_BYTES) -> int:
        """The limit of the next file: its own, or what is left of the request's when that is less."""
        self.left_at_file_start = self.remaining
        return max(0, min(per_file, self.remaining))

    def charge(self, produced: int) -> None:
        self.remaining -= produced

    def refuse(self, what: str, per_file: int) -> DecompressionBombError:
        """The error for a file that went past its limit: the request's, when less was left of it than
        the per-file limit, else the file's own."""
        if self.left_at_file_start < per_file:
            return DecompressionBombError(
                f"{what} would decompress past what is left of this upload's limit of "
                f"{self.total:,} decompressed bytes; send fewer files at once"
            )
        return DecompressionBombError(
            f"{what} decompresses to more than {per_file:,} bytes, which is refused as a likely zip bomb"
        )


@dataclass
class Extracted:
    filename: str
    text: str
    metadata: dict = field(default_factory=dict)


def clean_filename(raw: str | None) -> str:
    """Refuse names that are not a plain file name, rather than guess what the sender meant."""
    if raw is None or not raw.strip():
        raise ExtractionError("the file has no name")
    if len(raw) > MAX_FILENAME_CHARS:
        raise ExtractionError(f"the file name is {len(raw)} characters long; the limit is {MAX_FILENAME_CHARS}")
    if "/" in raw or "\\" in raw:
        raise ExtractionError("the file name contains a path separator (/ or \\)")
    if raw.strip() in (".", "..") or ".." in raw:
        raise ExtractionError("the file name contains '..'")
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in raw):
        raise ExtractionError("the file name contains control characters")
    return raw.strip()


def file_extension(filename: str) -> str:
    lower = filename.lower()
    if lower in KNOWN_NAMES:
        return KNOWN_NAMES[lower]
    stem, dot, ext = lower.rpartition(".")
    return ext if dot and stem else ""


def extract(
    filename: str, data: bytes, *, budget: InflateBudget | None = None, max_inflated: int = MAX_INFLATED_BYTES
) -> Extracted:
    """Extract the text of one uploaded file. Raises ExtractionError with the reason when it cannot.

    Decompression is charged to `budget` (a fresh one per call when not given) and limited to
    `max_inflated` bytes for this file."""
    budget = budget if budget is not None else InflateBudget(max_inflated)
    name = clean_filename(filename)
    ext = file_extension(name)
    if ext not in SUPPORTED_EXTENSIONS:
        shown = f".{ext}" if ext else "files without an extension"
        raise ExtractionError(
            f"{shown} is not a supported file type (supported: text, Markdown, HTML, PDF, "
            "Word .docx/.doc and source code)"
        )
    if not data:
        raise ExtractionError("the file is empty")

    metadata: dict = {
        "filename": name,
        "extension": ext,
        "mime": mimetypes.guess_type(name)[0] or _FALLBACK_MIME.get(ext, "text/plain"),
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if ext == "pdf":
        text, page_count = _pdf_text(data, budget=budget, max_inflated=max_inflated)
        metadata["pageCount"] = page_count
    elif ext == "docx":
        text = _docx_text(data, budget=budget, max_inflated=max_inflated)
    elif ext == "doc":
        text = _doc_text(data)
    elif ext in HTML_EXTENSIONS:
        text = _html_text(_decode(data))
    else:
        text = _decode(data)
    text = _normalise_newlines(text)
    if not text.strip():
        raise ExtractionError(
            "no extractable text" + (" (is it a scanned PDF without a text layer?)" if ext == "pdf" else "")
        )
    return Extracted(filename=name, text=text, metadata=metadata)


_FALLBACK_MIME = {
    "md": "text/markdown",
    "markdown": "text/markdown",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "doc": "application/msword",
    "pdf": "application/pdf",
    "rst": "text/x-rst",
    "ts": "text/x-typescript",
    "tsx": "text/x-typescript",
    "go": "text/x-go",
    "rs": "text/x-rust",
    "yaml": "application/yaml",
    "yml": "application/yaml",
    "toml": "application/toml",
}


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


_PREFERRED_LEGACY = ("cp1252", "iso8859_15", "latin_1")


def _decode(data: bytes) -> str:
    """Decode text of unknown encoding; refuse bytes that are not text at all."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        import codecs

        for bom, encoding in (
            (codecs.BOM_UTF8, "utf-8-sig"),
            (codecs.BOM_UTF16_LE, "utf-16"),
            (codecs.BOM_UTF16_BE, "utf-16"),
        ):
            if data.startswith(bom):
                return data.decode(encoding, errors="replace")
    sample = data[:65536]
    if b"\x00" in sample:
        raise ExtractionError("the file looks binary, not text (it contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        matches = list(from_bytes(data[:1_000_000]))
        if not matches:
            raise ExtractionError("the file looks binary, not text (no text encoding fits it)") from None
        encoding = matches[0].encoding
        # Single-byte code pages are hard to tell apart on short texts; when Windows-1252 (by far the
        # most common legacy encoding) reads the bytes nearly as cleanly as the top guess, prefer it.
        for match in matches:
            if match.encoding in _PREFERRED_LEGACY and match.chaos <= matches[0].chaos + 0.15:
                encoding = match.encoding
                break
        text = data.decode(encoding, errors="replace")
    controls = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\n\r\t\f\v")
    if controls > max(8, len(text[:65536]) // 100):
        raise ExtractionError("the file looks binary, not text (too many control characters)")
    return text


def _pdf_text(data: bytes, *, budget: InflateBudget, max_inflated: int) -> tuple[str, int]:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError, PyPdfError

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise ExtractionError("this is not a PDF file (it does not start with %PDF)")
    limit = budget.file_limit(max_inflated)
    # pypdf decompresses each stream with an output limit; it gets this file's budget, and the text
    # read so far is charged against it page by page.
    stream_limits = {
        name: min(limit, MAX_PDF_STREAM_BYTES)
        for name in (
            "zlib_maximum_output_length",
            "lzw_maximum_output_length",
            "run_length_maximum_output_length",
            "brotli_maximum_output_length",
            "jbig2_maximum_output_length",
            "array_based_stream_maximum_output_length",
            "maximum_declared_stream_length",
            "stream_decoding_work_maximum_length",
            "image_maximum_buffer_size",
            "xmp_maximum_input_length",
            "xfa_decoding_work_maximum_length",
        )
    }
    try:
        with apply_configuration(**stream_limits):
            pages = _pdf_pages(
                PdfReader(io.BytesIO(data), strict=False), budget=budget, limit=limit, max_inflated=max_inflated
            )
    except LimitReachedError as exc:
        raise DecompressionBombError(
            f"a stream inside this PDF decompresses to more than "
            f"{min(limit, MAX_PDF_STREAM_BYTES):,} bytes, which is refused as a likely "
            "zip bomb"
        ) from exc
    except ExtractionError:
        raise
    except (
        PyPdfError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        OSError,
        RecursionError,
        AssertionError,
        ZeroDivisionError,
    ) as exc:
        raise ExtractionError(f"the PDF is damaged or truncated and cannot be read ({type(exc).__name__})") from exc
    # Page breaks become paragraph breaks, so chunks prefer to end at a page.
    return "\n\n".join(page.strip() for page in pages if page.strip()), len(pages)


def _pdf_pages(reader, *, budget: InflateBudget, limit: int, max_inflated: int) -> list[str]:
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except Exception:  # noqa: BLE001 - any decrypt failure means we cannot read it
            opened = 0
        if not opened:
            raise ExtractionError("the PDF is encrypted with a password")
    pages: list[str] = []
    produced = 0
    for page in reader.pages:
        text = page.extract_text() or ""
        size = len(text.encode("utf-8", "surrogatepass"))
        produced += size
        budget.charge(size)
        if produced > limit:
            raise budget.refuse("this PDF", max_inflated)
        pages.append(text)
    return pages


def _docx_text(data: bytes, *, budget: InflateBudget, max_inflated: int) -> str:
    """The .docx's paragraphs and tables as Markdown-ish text, read from a copy of the archive whose
    members were inflated within the budget."""
    data = _docx_inflated(data, budget=budget, max_inflated=max_inflated)
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [
            block
            for element in document.element.body.iterchildren()
            if (block := _docx_block(element, document)) is not None
        ]
    except ExtractionError:
        raise
    except Exception as exc:
        raise ExtractionError(f"the .docx is damaged and cannot be read ({type(exc).__name__})") from exc
    return "\n\n".join(blocks)


def _docx_inflated(data: bytes, *, budget: InflateBudget, max_inflated: int) -> bytes:
    """The .docx rebuilt as a stored (uncompressed) zip, every member inflated by its real bytes and
    within the budget (zipfile would inflate a member whole before checking it against the size the
    archive declares, and that size can lie)."""
    limit = budget.file_limit(max_inflated)
    safe = io.BytesIO()
    produced = 0
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise ExtractionError("this is not a valid .docx file (it is not a zip archive)") from exc
    with archive, zipfile.ZipFile(safe, "w", zipfile.ZIP_STORED) as rebuilt:
        members = archive.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise ExtractionError(f"the .docx holds {len(members):,} files; at most {MAX_ZIP_MEMBERS:,} are read")
        if "word/document.xml" not in {info.filename for info in members}:
            raise ExtractionError("this is not a valid .docx file (no word/document.xml inside)")
        for info in members:
            if info.is_dir():
                continue
            content = _zip_member(data, info, limit=limit - produced, budget=budget, per_file=max_inflated)
            produced += len(content)
            rebuilt.writestr(info.filename, content)
    return safe.getvalue()


def _docx_block(element, document) -> str | None:
    """One body element as text: a paragraph (headings as #, list items as -) or a table (cells
    joined by |); None for anything else, an empty paragraph or a table without rows."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    tag = element.tag.rsplit("}", 1)[-1]
    if tag == "tbl":
        rows = [" | ".join(" ".join(cell.text.split()) for cell in row.cells) for row in Table(element, document).rows]
        return "\n".join(rows) if rows else None
    if tag != "p":
        return None
    paragraph = Paragraph(element, document)
    text = paragraph.text.strip()
    if not text:
        return None
    style = (paragraph.style.name or "") if paragraph.style is not None else ""
    match = re.match(r"Heading (\d)", style)
    if match:
        return "#" * int(match.group(1)) + " " + text
    if style == "Title":
        return "# " + text
    if style.startswith("List"):
        return "- " + text
    return text


_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")


def _zip_member(data: bytes, info: zipfile.ZipInfo, *, limit: int, budget: InflateBudget, per_file: int) -> bytes:
    """One zip member's bytes, read from its local header on and inflated with a byte budget: at most
    `limit` bytes out, and at most MAX_INFLATE_RATIO times the compressed bytes read once past
    INFLATE_RATIO_FLOOR. The sizes in the headers are not trusted for anything."""
    start = info.header_offset
    header = data[start : start + _LOCAL_HEADER.size]
    if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise ExtractionError("this .docx is damaged (a file inside it has no valid header)")
    fields = _LOCAL_HEADER.unpack(header)
    flags, method, name_length, extra_length = fields[3], fields[4], fields[10], fields[11]
    if flags & 0x1:
        raise ExtractionError("the .docx is encrypted")
    offset = start + _LOCAL_HEADER.size + name_length + extra_length
    if method == zipfile.ZIP_STORED:
        size = min(info.compress_size, max(0, len(data) - offset))
        budget.charge(min(size, limit + 1))
        if size > limit:
            raise budget.refuse("this .docx", per_file)
        return data[offset : offset + size]
    if method != zipfile.ZIP_DEFLATED:
        raise ExtractionError("the .docx uses a compression method other than deflate, which is not read")
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    parts: list[bytes] = []
    produced = consumed = 0
    position = offset
    pending = b""
    while not inflater.eof:
        if not pending:
            if position >= len(data):
                raise ExtractionError("this .docx is damaged (a file inside it is cut short)")
            pending = data[position : position + 65536]
            position += len(pending)
            consumed += len(pending)
        try:
            # At most 1 MB per step, so the checks below run before much memory is taken.
            piece = inflater.decompress(pending, min(1 << 20, limit - produced + 1))
        except zlib.error as exc:
            raise ExtractionError("this .docx is damaged (a file inside it cannot be decompressed)") from exc
        pending = inflater.unconsumed_tail
        produced += len(piece)
        budget.charge(len(piece))  # refused files count too: many bombs cannot add up
        if produced > limit:
            raise budget.refuse("this .docx", per_file)
        if produced > INFLATE_RATIO_FLOOR and produced > MAX_INFLATE_RATIO * (consumed - len(pending)):
            raise DecompressionBombError(
                f"a file inside this .docx inflates more than {MAX_INFLATE_RATIO} times "
                "its compressed size, which is refused as a likely zip bomb"
            )
        parts.append(piece)
    return b"".join(parts)


def antiword_available() -> bool:
    return shutil.which("antiword") is not None


def _doc_text(data: bytes) -> str:
    if not data.startswith(b"\xd0\xcf\x11\xe0"):
        raise ExtractionError("this is not a legacy Word .doc file")
    if not antiword_available():
        raise ExtractionError(
            "legacy Word .doc files need the 'antiword' program, which is not installed "
            "on this server (apt-get install antiword); save it as .docx instead"
        )
    try:
        done = subprocess.run(
            ["antiword", "-w", "0", "-"], input=data, capture_output=True, timeout=ANTIWORD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ExtractionError("reading the .doc file took too long") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise ExtractionError("the .doc file cannot be read" + (f": {reason[0]}" if reason else ""))
    return done.stdout.decode("utf-8", "replace")


class _VisibleText(HTMLParser):
    _SKIP = {"script", "style", "noscript", "template", "head", "svg"}
    _BLOCK = {
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "li",
        "ul",
        "ol",
        "table",
        "tr",
        "br",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "blockquote",
        "main",
        "nav",
        "aside",
        "title",
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self.skip_depth += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n" if tag not in ("br", "li", "tr") else "\n")

    def handle_endtag(self, tag):
        if tag in self._SKIP and self.skip_depth:
            self.skip_depth -= 1
        elif tag in self._BLOCK and tag not in ("li", "tr", "br"):
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.skip_depth:
            self.parts.append(data)


def _html_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
