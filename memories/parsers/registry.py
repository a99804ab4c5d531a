"""The registry of formats: a file's content chooses its format module (memories.parsers.detect; the
name's extension is a hint), whose parse reads the bytes; every format's text then gets the same
newline rule."""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass, field

from memories.parsers import (
    csv,
    detect,
    doc,
    docx,
    epub,
    feed,
    html,
    image,
    mail,
    markdown,
    ocr,
    odf,
    pdf,
    pptx,
    rtf,
    text,
    xlsx,
)
from memories.parsers.budget import MAX_INFLATED_BYTES, InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.filenames import clean_filename, file_extension
from memories.parsers.format import Format

# A new format is a module with a FORMAT and one line here: its media types say which detected
# content it reads (memories.parsers.detect), or its own sniff does. When two formats claim an
# extension or a media type, the first one listed reads it.
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
    rtf.FORMAT,
    mail.FORMAT,
    html.FORMAT,
    markdown.FORMAT,
    feed.FORMAT,
    text.FORMAT,
    text.PROSE,
    image.FORMAT,
)


def _by_extension(formats: tuple[Format, ...]) -> dict[str, Format]:
    table: dict[str, Format] = {}
    for fmt in formats:
        for ext in fmt.extensions:
            table.setdefault(ext, fmt)
    return table


def _by_media_type(formats: tuple[Format, ...]) -> dict[str, Format]:
    table: dict[str, Format] = {}
    for fmt in formats:
        for media_type in fmt.media_types.values():
            table.setdefault(media_type, fmt)
    return table


_BY_EXTENSION = _by_extension(FORMATS)
_BY_MEDIA_TYPE = _by_media_type(FORMATS)
SUPPORTED_EXTENSIONS = frozenset(_BY_EXTENSION)
DOCUMENT_EXTENSIONS = pdf.FORMAT.extensions | docx.FORMAT.extensions | doc.FORMAT.extensions
_FALLBACK_MIME = {ext: media for f in FORMATS for ext, media in f.media_types.items()}
# Media types that detection knows by a signature: a format claiming one reads binary, never text.
_SIGNATURE_TYPES = frozenset(detect.LABELS) - {detect.HTML, detect.TEXT}


def _name(fmt: Format) -> str:
    first = next(iter(fmt.media_types.values()), "")
    return fmt.name or detect.NAMES.get(first) or "/".join(sorted(fmt.extensions))


SUPPORTED = "supported: " + ", ".join(dict.fromkeys(_name(fmt) for fmt in FORMATS))


@dataclass
class Extracted:
    filename: str
    text: str
    metadata: dict = field(default_factory=dict)
    # The document's own title and the notices of its format's parse (see memories.parsers.format.Parsed).
    title: str | None = None
    notices: list[str] = field(default_factory=list)
    # Pages (1-based) left for OCR by extract(..., defer_ocr=True): the file still has to be read by a
    # worker (memories.services.upload_queue, memories.services.ocr_uploads) before it can become a memory.
    ocr_pages: list[int] = field(default_factory=list)


def extract(
    filename: str,
    data: bytes,
    *,
    budget: InflateBudget | None = None,
    max_inflated: int = MAX_INFLATED_BYTES,
    defer_ocr: bool = False,
    progress: ocr.Progress | None = None,
    should_stop: ocr.ShouldStop | None = None,
) -> Extracted:
    """Extract the text of one uploaded file. Raises ExtractionError with the reason when it cannot.

    Decompression is charged to `budget` (a fresh one per call when not given) and limited to
    `max_inflated` bytes for this file. Pages of a scan or photo with no usable text are read by OCR
    here (reporting `progress` and stopping when `should_stop`), or with `defer_ocr` left for a worker
    and listed in Extracted.ocr_pages."""
    budget = budget if budget is not None else InflateBudget(max_inflated)
    name = clean_filename(filename)
    ext = file_extension(name)
    if not data:
        raise ExtractionError("the file is empty")
    fmt, media_type, notices = choose(ext, data)

    metadata: dict = {
        "filename": name,
        "extension": ext,
        "mime": media_type or mimetypes.guess_type(name)[0] or _FALLBACK_MIME.get(ext, "text/plain"),
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    parsed = fmt.parse(data, budget=budget, max_inflated=max_inflated)
    if parsed.page_texts is not None:
        parsed = ocr.pages_finish(fmt, data, parsed, defer=defer_ocr, progress=progress, should_stop=should_stop)
    metadata.update(parsed.metadata)
    if parsed.pages is not None:
        metadata["pageCount"] = parsed.pages
    content = _normalise_newlines(parsed.text)
    pending = parsed.pending_pages
    if not content.strip() and not pending:
        raise ExtractionError("no extractable text" + fmt.no_text_hint)
    return Extracted(
        filename=name,
        text=content,
        metadata=metadata,
        title=parsed.title,
        notices=notices + parsed.notices,
        ocr_pages=pending,
    )


def choose(ext: str, data: bytes) -> tuple[Format, str, list[str]]:
    """The format that reads `data`, the media type to record when the extension does not say it
    ("" when it does), and the notice when the extension says something else. Raises ExtractionError for content
    no format reads."""
    hinted = _BY_EXTENSION.get(ext)
    for fmt in (hinted, *FORMATS):
        if fmt is not None and fmt.sniff is not None and fmt.sniff(data):
            return fmt, "", _renamed(ext, hinted, fmt, f"a .{min(fmt.extensions)} file")
    found = detect.detect(data, ext)
    if found.refusal:
        raise ExtractionError(found.refusal)
    if found.textual and hinted is not None and _reads_text(hinted):
        # The extension chooses the flavour of text: source code, Markdown, HTML, CSV...
        return hinted, "", []
    fmt = _BY_MEDIA_TYPE.get(found.media_type)
    if fmt is not None:
        if hinted is fmt:
            return fmt, "", []
        return fmt, found.media_type, _renamed(ext, hinted, fmt, found.label)
    if found.generic and hinted is not None and not _reads_text(hinted):
        # A damaged or unexpected file of the type its name says: its format says what is wrong.
        return hinted, "", []
    raise ExtractionError(_unsupported(ext, hinted, found))


def _reads_text(fmt: Format) -> bool:
    return not _SIGNATURE_TYPES.intersection(fmt.media_types.values())


def _renamed(ext: str, hinted: Format | None, fmt: Format, label: str) -> list[str]:
    if hinted is None or hinted is fmt:
        return []
    return [f"the file is named .{ext} but is really {label}, and was read as such"]


def _unsupported(ext: str, hinted: Format | None, found: detect.Kind) -> str:
    if hinted is not None and _reads_text(hinted):
        said = f"this .{ext} file is not text: it looks like {found.label}, which is not a supported file type"
    elif hinted is not None:
        said = f"this .{ext} file is really {found.label}, which is not a supported file type"
    elif ext:
        said = f".{ext} is not a supported file type: it looks like {found.label}"
    else:
        said = f"this file has no extension and is not a supported file type: it looks like {found.label}"
    return f"{said}; {SUPPORTED}"


def _normalise_newlines(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
