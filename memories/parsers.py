"""File bytes -> text (plain text, markup, code, PDF, DOCX, legacy DOC), with a clear reason when it cannot be done."""

from __future__ import annotations

import hashlib
import io
import mimetypes
import re
import shutil
import subprocess
import unicodedata
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser

MAX_FILENAME_CHARS = 255
# A .docx is a zip; refuse archives that inflate beyond this (zip bombs) before parsing them.
MAX_DOCX_INFLATED_BYTES = 200 * 1024 * 1024
MAX_DOCX_RATIO = 200
ANTIWORD_TIMEOUT_S = 60

TEXT_EXTENSIONS = {"txt", "text", "md", "markdown", "rst", "csv", "tsv", "json", "xml", "log", "tex", "org",
                   "adoc"}
HTML_EXTENSIONS = {"html", "htm", "xhtml"}
CODE_EXTENSIONS = {
    "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "java", "go", "rs", "c", "h", "cpp", "cc", "cxx", "hpp",
    "hh", "cs", "rb", "php", "swift", "kt", "kts", "scala", "sh", "bash", "zsh", "fish", "ps1", "sql", "yaml",
    "yml", "toml", "ini", "cfg", "conf", "env", "css", "scss", "sass", "less", "vue", "svelte", "lua", "pl", "pm",
    "r", "jl", "dart", "ex", "exs", "erl", "hs", "ml", "mli", "clj", "cljs", "groovy", "gradle", "m", "mm", "f90",
    "proto", "graphql", "gql", "dockerfile", "makefile", "cmake", "bat", "vb", "fs", "elm", "nim", "zig", "v",
    "sol", "tf", "hcl",
}
DOCUMENT_EXTENSIONS = {"pdf", "docx", "doc"}
SUPPORTED_EXTENSIONS = TEXT_EXTENSIONS | HTML_EXTENSIONS | CODE_EXTENSIONS | DOCUMENT_EXTENSIONS
# Files known by their whole name rather than an extension.
KNOWN_NAMES = {"dockerfile": "dockerfile", "makefile": "makefile", "readme": "txt", "license": "txt",
               "changelog": "txt", "procfile": "txt"}


class ExtractionError(ValueError):
    """The file cannot become a memory; the message says why, in words a person understands."""


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


def extract(filename: str, data: bytes) -> Extracted:
    """Extract the text of one uploaded file. Raises ExtractionError with the reason when it cannot."""
    name = clean_filename(filename)
    ext = file_extension(name)
    if ext not in SUPPORTED_EXTENSIONS:
        shown = f".{ext}" if ext else "files without an extension"
        raise ExtractionError(f"{shown} is not a supported file type (supported: text, Markdown, HTML, PDF, "
                              "Word .docx/.doc and source code)")
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
        text, page_count = _pdf_text(data)
        metadata["pageCount"] = page_count
    elif ext == "docx":
        text = _docx_text(data)
    elif ext == "doc":
        text = _doc_text(data)
    elif ext in HTML_EXTENSIONS:
        text = _html_text(_decode(data))
    else:
        text = _decode(data)
    text = _normalise_newlines(text)
    if not text.strip():
        raise ExtractionError("no extractable text" + (" (is it a scanned PDF without a text layer?)"
                                                       if ext == "pdf" else ""))
    return Extracted(filename=name, text=text, metadata=metadata)


_FALLBACK_MIME = {
    "md": "text/markdown", "markdown": "text/markdown", "docx":
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "doc": "application/msword",
    "pdf": "application/pdf", "rst": "text/x-rst", "ts": "text/x-typescript", "tsx": "text/x-typescript",
    "go": "text/x-go", "rs": "text/x-rust", "yaml": "application/yaml", "yml": "application/yaml",
    "toml": "application/toml",
}


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


_PREFERRED_LEGACY = ("cp1252", "iso8859_15", "latin_1")


def _decode(data: bytes) -> str:
    """Decode text of unknown encoding; refuse bytes that are not text at all."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        import codecs

        for bom, encoding in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                              (codecs.BOM_UTF16_BE, "utf-16")):
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


def _pdf_text(data: bytes) -> tuple[str, int]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise ExtractionError("this is not a PDF file (it does not start with %PDF)")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except Exception:  # noqa: BLE001 - any decrypt failure means we cannot read it
                opened = 0
            if not opened:
                raise ExtractionError("the PDF is encrypted with a password")
        pages = [page.extract_text() or "" for page in reader.pages]
    except ExtractionError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, AssertionError, ZeroDivisionError) as exc:
        raise ExtractionError(f"the PDF is damaged or truncated and cannot be read ({type(exc).__name__})") from exc
    # Page breaks become paragraph breaks, so chunks prefer to end at a page.
    return "\n\n".join(page.strip() for page in pages if page.strip()), len(pages)


def _docx_text(data: bytes) -> str:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ExtractionError("this is not a valid .docx file (it is not a zip archive)") from exc
    with archive:
        inflated = sum(info.file_size for info in archive.infolist())
        if inflated > MAX_DOCX_INFLATED_BYTES or inflated > MAX_DOCX_RATIO * max(len(data), 1) + 10_000_000:
            raise ExtractionError(f"the .docx would decompress to {inflated:,} bytes, which is refused as a "
                                  "likely zip bomb")
        if "word/document.xml" not in archive.namelist():
            raise ExtractionError("this is not a valid .docx file (no word/document.xml inside)")
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[str] = []
        for element in document.element.body.iterchildren():
            tag = element.tag.rsplit("}", 1)[-1]
            if tag == "p":
                paragraph = Paragraph(element, document)
                text = paragraph.text.strip()
                if not text:
                    continue
                style = (paragraph.style.name or "") if paragraph.style is not None else ""
                match = re.match(r"Heading (\d)", style)
                if match:
                    text = "#" * int(match.group(1)) + " " + text
                elif style == "Title":
                    text = "# " + text
                elif style.startswith("List"):
                    text = "- " + text
                blocks.append(text)
            elif tag == "tbl":
                rows = []
                for row in Table(element, document).rows:
                    cells = [" ".join(cell.text.split()) for cell in row.cells]
                    rows.append(" | ".join(cells))
                if rows:
                    blocks.append("\n".join(rows))
    except ExtractionError:
        raise
    except Exception as exc:  # noqa: BLE001 - python-docx raises many kinds on malformed XML
        raise ExtractionError(f"the .docx is damaged and cannot be read ({type(exc).__name__})") from exc
    return "\n\n".join(blocks)


def antiword_available() -> bool:
    return shutil.which("antiword") is not None


def _doc_text(data: bytes) -> str:
    if not data.startswith(b"\xd0\xcf\x11\xe0"):
        raise ExtractionError("this is not a legacy Word .doc file")
    if not antiword_available():
        raise ExtractionError("legacy Word .doc files need the 'antiword' program, which is not installed "
                              "on this server (apt-get install antiword); save it as .docx instead")
    try:
        done = subprocess.run(["antiword", "-w", "0", "-"], input=data, capture_output=True,
                              timeout=ANTIWORD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ExtractionError("reading the .doc file took too long") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise ExtractionError("the .doc file cannot be read" + (f": {reason[0]}" if reason else ""))
    return done.stdout.decode("utf-8", "replace")


class _VisibleText(HTMLParser):
    _SKIP = {"script", "style", "noscript", "template", "head", "svg"}
    _BLOCK = {"p", "div", "section", "article", "header", "footer", "li", "ul", "ol", "table", "tr", "br", "hr",
              "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "main", "nav", "aside", "title"}

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
