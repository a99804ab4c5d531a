"""The registry of formats: a file's name chooses its format module, whose parse reads the bytes
(and checks they are what the name says); every format's text then gets the same newline rule."""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass, field

from memories.parsers import csv, doc, docx, epub, html, odf, pdf, pptx, text, xlsx
from memories.parsers.budget import MAX_INFLATED_BYTES, InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.filenames import clean_filename, file_extension
from memories.parsers.format import Format

# A new format is a module with a FORMAT, one line here, and its name in UNSUPPORTED below. When two
# formats claim an extension, the first one listed reads it.
FORMATS: tuple[Format, ...] = (
    pdf.FORMAT,
    docx.FORMAT,
    doc.FORMAT,
    pptx.FORMAT,
    xlsx.FORMAT,
    csv.FORMAT,
    odf.ODT,
    odf.ODS,
    odf.ODP,
    epub.FORMAT,
    html.FORMAT,
    text.FORMAT,
)


def _by_extension(formats: tuple[Format, ...]) -> dict[str, Format]:
    table: dict[str, Format] = {}
    for fmt in formats:
        for ext in fmt.extensions:
            table.setdefault(ext, fmt)
    return table


_BY_EXTENSION = _by_extension(FORMATS)
SUPPORTED_EXTENSIONS = frozenset(_BY_EXTENSION)
DOCUMENT_EXTENSIONS = pdf.FORMAT.extensions | docx.FORMAT.extensions | doc.FORMAT.extensions
_FALLBACK_MIME = {ext: media for f in FORMATS for ext, media in f.media_types.items()}
UNSUPPORTED = (
    "{shown} is not a supported file type (supported: text, Markdown, HTML, PDF, Word .docx/.doc, PowerPoint "
    ".pptx, Excel .xlsx, CSV, OpenDocument .odt/.ods/.odp, EPUB and source code)"
)


@dataclass
class Extracted:
    filename: str
    text: str
    metadata: dict = field(default_factory=dict)
    # The document's own title and the notices of its format's parse (see memories.parsers.format.Parsed).
    title: str | None = None
    notices: list[str] = field(default_factory=list)


def extract(
    filename: str, data: bytes, *, budget: InflateBudget | None = None, max_inflated: int = MAX_INFLATED_BYTES
) -> Extracted:
    """Extract the text of one uploaded file. Raises ExtractionError with the reason when it cannot.

    Decompression is charged to `budget` (a fresh one per call when not given) and limited to
    `max_inflated` bytes for this file."""
    budget = budget if budget is not None else InflateBudget(max_inflated)
    name = clean_filename(filename)
    ext = file_extension(name)
    fmt = _BY_EXTENSION.get(ext)
    if fmt is None:
        raise ExtractionError(UNSUPPORTED.format(shown=f".{ext}" if ext else "files without an extension"))
    if not data:
        raise ExtractionError("the file is empty")

    metadata: dict = {
        "filename": name,
        "extension": ext,
        "mime": mimetypes.guess_type(name)[0] or _FALLBACK_MIME.get(ext, "text/plain"),
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    parsed = fmt.parse(data, budget=budget, max_inflated=max_inflated)
    if parsed.pages is not None:
        metadata["pageCount"] = parsed.pages
    content = _normalise_newlines(parsed.text)
    if not content.strip():
        raise ExtractionError("no extractable text" + fmt.no_text_hint)
    return Extracted(filename=name, text=content, metadata=metadata, title=parsed.title, notices=parsed.notices)


def _normalise_newlines(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
