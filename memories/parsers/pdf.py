"""PDF: each page's text layer read by PDFium (pypdfium2), pages without usable text marked for OCR
and rendered for it, the title from the document's metadata, all within the decompression budget."""

from __future__ import annotations

import re
import statistics
import threading
import unicodedata
import zlib
from collections.abc import Iterator

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import DecompressionBombError, ExtractionError
from memories.parsers.format import Format, PageImage, Parsed
from memories.parsers.pages import PageText, text_is_usable, without_garbled_lines

# One content stream holds one page's drawing operators, a few hundred KB even for dense text.
MAX_PDF_STREAM_BYTES = 16 * 1024 * 1024
# Readers accept a header after stray bytes (a mail gateway's prefix, a BOM) within the first KB.
HEADER_WINDOW = 1024
# Pages with text or anything drawn go to OCR, so a PDF left with no text has nothing on its pages.
NO_TEXT_HINT = " (its pages are blank)"
# A page whose text layer holds fewer letters than this while images cover most of it is a scan with
# a stray caption or a running header: OCR reads the whole page.
SCAN_MAX_LAYER_LETTERS = 200
SCAN_MIN_IMAGE_COVER = 0.8

# PDFium is not thread-safe: one call into it at a time per process.
_PDFIUM = threading.RLock()

_IMAGE_DICT = re.compile(rb"/Subtype\s*/Image\b")
_FLATE = re.compile(rb"/FlateDecode\b|/Fl\b")


def header_offset(data: bytes) -> int | None:
    """Where the %PDF header starts, when it is within the first KB (as PDF readers accept it)."""
    at = data.find(b"%PDF-", 0, HEADER_WINDOW + 5)
    return at if at >= 0 else None


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    start = header_offset(data)
    if start is None:
        raise ExtractionError("this is not a PDF file (there is no %PDF header in its first 1 KB)")
    data = data[start:]
    limit = budget.file_limit(max_inflated)
    _check_streams(data, budget=budget, limit=limit, max_inflated=max_inflated)
    with _PDFIUM:
        document = _open(data)
        try:
            pages = [_page_text(document, index) for index in range(len(document))]
            title = real_title(_metadata_title(document)) or (
                real_title(first_page_heading(document)) if len(document) else None
            )
        finally:
            document.close()
    return Parsed.from_pages(pages, title=title)


def _open(data: bytes):
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        # No password: PDFium opens a file encrypted with an empty user password as readers do.
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise ExtractionError(
                "the PDF is password-protected (encrypted with a password); remove the password and upload it again"
            ) from exc
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_SECURITY:
            raise ExtractionError("the PDF uses an encryption this server cannot open") from exc
        raise ExtractionError("the PDF is damaged or truncated and cannot be read") from exc


def _check_streams(data: bytes, *, budget: InflateBudget, limit: int, max_inflated: int) -> None:
    """Inflate every Flate stream but images (their pixels are bounded when a page is rendered) with
    an output limit, before PDFium decompresses them without one: a bomb is refused, whatever the
    file's structure says, and the bytes are charged to the budget."""
    per_stream = min(limit, MAX_PDF_STREAM_BYTES)
    produced = 0
    view = memoryview(data)
    # bytes.find, not a regex: a scan's image streams are most of its bytes and are skipped whole.
    at = data.find(b"stream")
    while at >= 0:
        body = _stream_body(data, at)
        if body is None:  # "endstream", or the word inside other bytes
            at = data.find(b"stream", at + 6)
            continue
        end = data.find(b"endstream", body)
        end = end if end >= 0 else len(data)
        head = data[max(0, at - 2048) : at]
        head = head[head.rfind(b"obj") + 3 :] if b"obj" in head else head
        if not _IMAGE_DICT.search(head) and _FLATE.search(head):
            size = _inflated_size(view[body:end], per_stream)
            produced += size
            budget.charge(size)
            if produced > limit:
                raise budget.refuse("this PDF", max_inflated)
        at = data.find(b"stream", end + 9)


def _stream_body(data: bytes, at: int) -> int | None:
    """Where a stream's bytes start, when the "stream" keyword at `at` opens one."""
    if data[max(0, at - 3) : at] == b"end":
        return None
    after = at + 6
    if data[after : after + 2] == b"\r\n":
        return after + 2
    if data[after : after + 1] in (b"\n", b"\r"):
        return after + 1
    return None


def _inflated_size(body: memoryview, per_stream: int) -> int:
    try:
        out = zlib.decompressobj().decompress(body, per_stream + 1)
    except zlib.error:
        return 0  # damaged or not zlib: PDFium decides what it can read
    if len(out) > per_stream:
        raise DecompressionBombError(
            f"a stream inside this PDF decompresses to more than {per_stream:,} bytes, which is "
            "refused as a likely zip bomb"
        )
    return len(out)


# Titles that name a program, a file or nothing: "Microsoft Word - report.doc", "untitled", "Slide 1".
_PRODUCER_PREFIX = re.compile(
    r"^(?:microsoft (?:word|excel|powerpoint)|powerpoint presentation|writer|calc|impress)\s*[-–:]\s*", re.I
)
_FILE_NAME = re.compile(
    r"(?:^|[\\/])[^\\/]*\.(?:pdf|docx?|rtf|odt|pptx?|xlsx?|txt|tex|dvi|ps|eps|indd|qxd|qxp|pages|html?|"
    r"md|jpe?g|png|tiff?)$|^(?:[a-z]:)?[\\/]|\\",
    re.I,
)
_PLACEHOLDER = re.compile(
    r"^(?:untitled(?:[- ]?\d+)?|unbenannt|sans titre|document\d*|doc\d*|title|no title|none|null|"
    r"slide \d+|presentation\d*|powerpoint presentation|microsoft word|blank|default|print|\W*)$",
    re.I,
)
MAX_TITLE_CHARS = 300


def real_title(raw: str | None) -> str | None:
    """The document's declared title when it is one: not a program's "Microsoft Word - x.doc", not a
    file name, not "untitled" or another placeholder, not digits or punctuation alone."""
    title = " ".join((raw or "").split())
    if _PRODUCER_PREFIX.match(title):
        return None
    if not title or len(title) > MAX_TITLE_CHARS or _FILE_NAME.search(title) or _PLACEHOLDER.match(title):
        return None
    if not any(ch.isalpha() for ch in title):
        return None
    return title


# A first-page line counts as the title when its letters are set this much larger than the page's
# body text: a paper's or a form's title, never a bold word in a paragraph.
HEADING_SIZE_RATIO = 1.3
HEADING_MIN_LETTERS = 4
HEADING_MIN_BODY_LETTERS = 40


def first_page_heading(document) -> str | None:
    """The first page's largest text, when the metadata names no title: the lines set in the largest
    font (a title may wrap), if that font is clearly larger than the page's body text."""
    import pypdfium2.raw as pdfium_c

    page = document[0]
    try:
        textpage = page.get_textpage()
        try:
            count = textpage.count_chars()
            text = textpage.get_text_range(0, count)
            if len(text) != count:  # characters PDFium did not map one to one: no sizes to trust
                return None
            sizes = [pdfium_c.FPDFText_GetFontSize(textpage.raw, index) for index in range(count)]
        finally:
            textpage.close()
    finally:
        page.close()
    return heading_of_lines(_sized_lines(text, sizes))


def _sized_lines(text: str, sizes: list[float]) -> list[list[tuple[str, float]]]:
    lines: list[list[tuple[str, float]]] = [[]]
    for char, size in zip(text, sizes, strict=True):
        if char in "\r\n":
            if lines[-1]:
                lines.append([])
        else:
            lines[-1].append((char, size))
    return [line for line in lines if line]


def heading_of_lines(lines: list[list[tuple[str, float]]]) -> str | None:
    """The text of the first run of lines whose letters share the largest size, when it is
    HEADING_SIZE_RATIO times the median letter size of all lines; None when no line stands out so."""
    letters = [size for line in lines for char, size in line if char.isalpha()]
    if len(letters) < HEADING_MIN_BODY_LETTERS:
        return None
    body = statistics.median(letters)
    best: list[str] = []
    top = 0.0
    running = False  # whether the lines since the last one kept continue the title
    for line in lines:
        line_letters = [size for char, size in line if char.isalpha()]
        if len(line_letters) < HEADING_MIN_LETTERS:
            continue
        size = statistics.median(line_letters)
        words = "".join(char for char, _ in line).strip()
        if size >= HEADING_SIZE_RATIO * body and size > top + 0.01:
            best, top, running = [words], size, True
        elif size >= HEADING_SIZE_RATIO * body and abs(size - top) <= 0.01 and running:
            best.append(words)  # the title wraps onto this line
        else:
            # A line in another size ends the title: a later line of its size is a section's heading
            # ("1 Introduction" after the abstract), not more of the title.
            running = False
    return _without_final_stop(" ".join(best)) or None


def _without_final_stop(heading: str) -> str:
    """A heading without the full stop set after it ("FACTUUR." is titled "FACTUUR"), unless the
    stop ends an abbreviation ("Acme Inc.", "U.S.") or the heading holds sentences."""
    if not heading.endswith(".") or heading.endswith("..") or "." in heading[:-1]:
        return heading
    last = heading[:-1].rsplit(maxsplit=1)[-1] if heading[:-1].strip() else ""
    return heading[:-1].rstrip() if sum(ch.isalpha() for ch in last) > 3 else heading


def _metadata_title(document) -> str:
    try:
        return document.get_metadata_value("Title")
    except Exception:  # noqa: BLE001 - metadata is optional; an unreadable value is no title
        return ""


def _page_text(document, index: int) -> PageText:
    import pypdfium2.raw as pdfium_c

    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            raw = textpage.get_text_bounded()
        finally:
            textpage.close()
        text = _clean(raw)
        width, height = page.get_size()
        area = max(1.0, width * height)
        covered, images, drawn = 0.0, False, False
        for obj in page.get_objects(max_depth=4):
            if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                left, bottom, right, top = obj.get_bounds()
                covered += max(0.0, right - left) * max(0.0, top - bottom)
                images = True
            elif obj.type in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_SHADING, pdfium_c.FPDF_PAGEOBJ_TEXT):
                # Paths may be letters drawn as outlines, and text in a font with no encoding is still drawn.
                drawn = True
    finally:
        page.close()
    letters = sum(ch.isalpha() for ch in text)
    if text.strip() and not text_is_usable(text):
        return PageText(number=index + 1, text="", state="pending", reason="undecodable", layer=text)
    if text.strip() and letters < SCAN_MAX_LAYER_LETTERS and covered / area >= SCAN_MIN_IMAGE_COVER:
        return PageText(number=index + 1, text="", state="pending", reason="scanned", layer=text)
    if text.strip():
        text, garbled = without_garbled_lines(text)
        return PageText(number=index + 1, text=text, state="text", garbled=garbled)
    if images:
        return PageText(number=index + 1, text="", state="pending", reason="no-text-layer")
    if drawn:
        return PageText(number=index + 1, text="", state="pending", reason="drawing")
    return PageText(number=index + 1, text="", state="blank")


def _clean(raw: str) -> str:
    # PDFium marks a hyphen it removed at a line end with U+0002 and ends lines with CR LF.
    return accented(raw.replace("\x02", "").replace("\r\n", "\n").replace("\r", "\n"))


# TeX sets an accent as a glyph of its own before the letter it sits on, over a dotless i or j for
# those: a text layer reads "na¨ıve", "caf´e", "Espa˜na". The spacing accents and their combining forms
# (not the grave, which is also the backtick of code: "run`echo`").
_SPACING_ACCENTS = {
    "\u00a8": "\u0308",  # diaeresis
    "\u00b4": "\u0301",  # acute
    "\u02c6": "\u0302",  # circumflex
    "\u02dc": "\u0303",  # tilde
    "\u00af": "\u0304",  # macron
    "\u02d8": "\u0306",  # breve
    "\u02d9": "\u0307",  # dot above
    "\u02da": "\u030a",  # ring above
    "\u02dd": "\u030b",  # double acute
    "\u02c7": "\u030c",  # caron
    "\u00b8": "\u0327",  # cedilla
}
_ACCENT_IN_WORD = re.compile(r"(?<=[^\W\d_])([" + "".join(_SPACING_ACCENTS) + r"])([^\W\d_])")
_DOTLESS = {"\u0131": "i", "\u0237": "j"}


def accented(text: str) -> str:
    """The text with each spacing accent set inside a word before its letter made one accented
    letter ("na¨ıve" is "naïve"), where Unicode has that letter: "don´t", with an acute where an
    apostrophe was meant, and "/˜aligon" in an address stay as they are."""

    def compose(match: re.Match) -> str:
        letter = unicodedata.normalize("NFC", _DOTLESS.get(match[2], match[2]) + _SPACING_ACCENTS[match[1]])
        return letter if len(letter) == 1 else match[0]

    return _ACCENT_IN_WORD.sub(compose, text) if any(accent in text for accent in _SPACING_ACCENTS) else text


def render(data: bytes, numbers: list[int], *, dpi: int, max_pixels: int) -> Iterator[PageImage]:
    """Each asked page (1-based) as a greyscale image at `dpi`, scaled down to at most `max_pixels`;
    a page holding an image over `max_pixels` is not rendered (a decompression-bomb guard)."""
    data = data[header_offset(data) or 0 :]
    with _PDFIUM:
        document = _open(data)
    try:
        for number in numbers:
            with _PDFIUM:
                page_image = _render_page(document, number, dpi=dpi, max_pixels=max_pixels)
            yield page_image
    finally:
        with _PDFIUM:
            document.close()


def _render_page(document, number: int, *, dpi: int, max_pixels: int) -> PageImage:
    import pypdfium2.raw as pdfium_c

    page = document[number - 1]
    try:
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
            width, height = obj.get_px_size()
            if width * height > max_pixels:
                return PageImage(
                    number=number,
                    image=None,
                    error=f"it holds an image of {width:,} × {height:,} pixels, over the limit of {max_pixels:,}",
                )
        width, height = page.get_size()
        scale = dpi / 72
        if width * height * scale * scale > max_pixels:
            scale = (max_pixels / max(1.0, width * height)) ** 0.5
        bitmap = page.render(scale=scale, grayscale=True, draw_annots=False)
        try:
            image = bitmap.to_pil().convert("L")
        finally:
            bitmap.close()
        return PageImage(number=number, image=image)
    finally:
        page.close()


def looks_like(data: bytes) -> bool:
    return header_offset(data) is not None


FORMAT = Format(
    extensions=frozenset({"pdf"}),
    parse=parse,
    media_types={"pdf": "application/pdf"},
    no_text_hint=NO_TEXT_HINT,
    render=render,
    what="PDF",
)
