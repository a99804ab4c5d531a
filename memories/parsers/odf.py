"""OpenDocument text, spreadsheets and presentations (.odt, .ods, .odp), read from content.xml through the
bounded zip with a safe XML parser: text as Markdown-ish blocks (headings as #, list items as -, text
boxes after their paragraph, footnotes, headers and footers), sheets as rows within the cell bound
(memories.parsers.sheets), slides with their notes; the title from meta.xml, else the Title paragraph,
the heading line the text opens with (memories.parsers.titles.heading_title) or the first heading."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from memories.parsers import sheets
from memories.parsers.bounded_zip import DocumentArchive
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.titles import declared_title, heading_title
from memories.parsers.xmltree import parse_xml

OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
MANIFEST = "{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}"
DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"

_KINDS = {
    "application/vnd.oasis.opendocument.text": "an OpenDocument text (.odt)",
    "application/vnd.oasis.opendocument.spreadsheet": "an OpenDocument spreadsheet (.ods)",
    "application/vnd.oasis.opendocument.presentation": "an OpenDocument presentation (.odp)",
    "application/epub+zip": "an EPUB e-book (.epub)",
}
# Generated or hidden content: tables of contents and indexes repeat the headings, tracked changes hold
# deleted text, annotations are comments.
_SKIPPED_BLOCKS = {
    TEXT + name
    for name in (
        "table-of-content",
        "alphabetical-index",
        "illustration-index",
        "table-index",
        "object-index",
        "user-index",
        "bibliography",
        "tracked-changes",
        "sequence-decls",
        "variable-decls",
        "user-field-decls",
    )
}
_SKIPPED_INLINE = {OFFICE + "annotation", OFFICE + "annotation-end", TEXT + "tracked-changes"}
_SKIPPED_INLINE |= {TEXT + "note-citation", TEXT + "ruby-text"}
_BOX_CONTENT = {TEXT + "p", TEXT + "h", TEXT + "list", TABLE + "table"}
_SLIDE_FURNITURE = {"page-number", "date-time", "footer", "header"}


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int, what: str = ".odt") -> Parsed:
    archive = DocumentArchive(data, what=what, budget=budget, max_inflated=max_inflated)
    mimetype = (archive.read("mimetype") or b"")[:200].decode("ascii", "replace").strip()
    if mimetype and not mimetype.startswith("application/vnd.oasis.opendocument."):
        raise ExtractionError(
            f"this is not a {what} file: it is {_KINDS.get(mimetype, 'another kind of zip')}; rename it"
        )
    if archive.find("content.xml") is None:
        raise ExtractionError(f"this is not a valid {what} file (no content.xml inside)")
    _refuse_encrypted(archive)
    content = parse_xml(archive.read("content.xml") or b"", what=what, part="content.xml")
    reader = _Reader(content)
    body = content.find(OFFICE + "body")
    kind = next((child for child in body if isinstance(child.tag, str)), None) if body is not None else None
    blocks: list[str] = []
    notices: list[str] = []
    if kind is None:
        pass
    elif kind.tag == OFFICE + "spreadsheet":
        book = sheets.Sheets(max_inflated=max_inflated)
        for table in kind.findall(TABLE + "table"):
            book.add(table.get(TABLE + "name") or "", _sheet_rows(table, reader, cap=book.limit * sheets.SCAN_FACTOR))
        blocks, notices = [book.text()], book.notices()
    elif kind.tag in (OFFICE + "presentation", OFFICE + "drawing"):
        blocks = list(reader.slides(kind))
    else:
        headers, footers = _headers_and_footers(archive, what)
        blocks = headers + list(reader.blocks(kind, top=True)) + reader.notes + footers
    # As in a .docx (memories.parsers.docx): the marked Title, else the heading line the text opens with.
    opening = heading_title(reader.opening[0], styled=reader.opening[1]) if reader.opening else None
    title = (
        _meta_title(archive, what)
        or declared_title(reader.first_title)
        or opening
        or declared_title(reader.first_heading)
    )
    return Parsed(text="\n\n".join(block for block in blocks if block), title=title, notices=notices)


def _refuse_encrypted(archive: DocumentArchive) -> None:
    """A password-protected OpenDocument file keeps its manifest readable and its parts encrypted."""
    data = archive.read("META-INF/manifest.xml")
    if data is None:
        return
    manifest = parse_xml(data, what=archive.what, part="META-INF/manifest.xml")
    for entry in manifest.iter(MANIFEST + "file-entry"):
        if entry.get(MANIFEST + "full-path") == "content.xml" and entry.find(MANIFEST + "encryption-data") is not None:
            raise ExtractionError(
                f"this {archive.what} is password-protected and cannot be read; save a copy without the password"
            )


def _meta_title(archive: DocumentArchive, what: str) -> str | None:
    data = archive.read("meta.xml")
    if data is None:
        return None
    element = next(parse_xml(data, what=what, part="meta.xml").iter(DC_TITLE), None)
    return declared_title("".join(element.itertext())) if element is not None else None


def _headers_and_footers(archive: DocumentArchive, what: str) -> tuple[list[str], list[str]]:
    """The text of the master pages' headers and footers (in styles.xml), each distinct one once."""
    data = archive.read("styles.xml")
    if data is None:
        return [], []
    styles = parse_xml(data, what=what, part="styles.xml")
    reader = _Reader(styles)
    found: dict[str, list[str]] = {"header": [], "footer": []}
    seen: set[str] = set()
    for page in styles.iter(STYLE + "master-page"):
        for part in page:
            tag = part.tag if isinstance(part.tag, str) else ""
            kind = (
                "header" if tag.startswith(STYLE + "header") else "footer" if tag.startswith(STYLE + "footer") else ""
            )
            if not kind or tag.endswith("-style"):
                continue
            for block in reader.blocks(part):
                if block not in seen:
                    seen.add(block)
                    found[kind].append(block)
    return found["header"], found["footer"]


class _Reader:
    """Text out of one ODF XML part, knowing its paragraph styles (to find the Title paragraph)."""

    def __init__(self, root):
        self.parents = {
            style.get(STYLE + "name"): style.get(STYLE + "parent-style-name")
            for style in root.iter(STYLE + "style")
            if style.get(STYLE + "family") == "paragraph"
        }
        self.notes: list[str] = []
        self.first_title: str | None = None
        self.first_heading: str | None = None
        # The body's first paragraph or table, as docx reads it (memories.parsers.docx).
        self.opening: tuple[str, bool] | None = None
        self.opened = False
        self.is_title = functools.cache(self._is_title)

    def _is_title(self, style: str | None) -> bool:
        for _ in range(10):  # a style's parent's parent...; a loop among them ends here
            if style is None:
                return False
            if style.lower() == "title":
                return True
            style = self.parents.get(style)
        return False

    def blocks(self, container, *, top: bool = False, depth: int = 0) -> Iterator[str]:
        for element in container:
            tag = element.tag
            if not isinstance(tag, str) or tag in _SKIPPED_BLOCKS:
                continue
            if tag in (TEXT + "p", TEXT + "h"):
                yield from self._paragraph(element, top=top, depth=depth)
            elif tag == TEXT + "list":
                for item in element:
                    yield from self.blocks(item, top=top, depth=depth + 1)
            elif tag == TABLE + "table":
                if table := self._table(element):
                    self.opened = self.opened or top
                    yield table
            elif tag.startswith(DRAW):
                yield from self._shape(element)
            else:  # text:section, text:index-body of a kept index, office:forms...
                yield from self.blocks(element, top=top, depth=depth)

    def _paragraph(self, paragraph, *, top: bool, depth: int) -> Iterator[str]:
        text = self.inline(paragraph).strip()
        if text:
            if top and not self.opened:
                # A list item first is no heading, whatever its style.
                self.opened = True
                styled = paragraph.tag == TEXT + "h" or self.is_title(paragraph.get(TEXT + "style-name"))
                self.opening = (text, styled) if not depth else None
            if paragraph.tag == TEXT + "h":
                level_text = paragraph.get(TEXT + "outline-level", "1")
                level = min(int(level_text), 6) if level_text.isdigit() and int(level_text) > 0 else 1
                if top and level == 1 and self.first_heading is None:
                    self.first_heading = text
                yield "#" * level + " " + text
            elif self.is_title(paragraph.get(TEXT + "style-name")):
                if top and self.first_title is None:
                    self.first_title = text
                yield "# " + text
            elif depth:
                yield "  " * (depth - 1) + "- " + text
            else:
                yield text
        for box in _boxes(paragraph):
            yield from self.blocks(box)

    def _shape(self, shape) -> Iterator[str]:
        if shape.tag == DRAW + "g":
            for inner in shape:
                if isinstance(inner.tag, str) and inner.tag.startswith(DRAW):
                    yield from self._shape(inner)
            return
        for box in _boxes(shape, include_self=True):
            yield from self.blocks(box)

    def inline(self, element) -> str:
        parts: list[str] = []
        self._inline(element, parts)
        return "".join(parts)

    def _inline(self, element, parts: list[str]) -> None:
        if element.text:
            parts.append(element.text)
        for child in element:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag == TEXT + "s":
                count = child.get(TEXT + "c", "1")
                parts.append(" " * min(int(count) if count.isdigit() else 1, 100))
            elif tag == TEXT + "tab":
                parts.append("\t")
            elif tag == TEXT + "line-break":
                parts.append("\n")
            elif tag == TEXT + "note":
                body = child.find(TEXT + "note-body")
                if body is not None:
                    self.notes.extend(self.blocks(body))
            elif tag and tag not in _SKIPPED_INLINE and not tag.startswith(DRAW):
                self._inline(child, parts)
            if child.tail:
                parts.append(child.tail)

    def _cell(self, cell) -> str:
        return " ".join(" ".join(self.inline(p) for p in cell.iter(TEXT + "p", TEXT + "h")).split())

    def _table(self, table) -> str | None:
        rows = []
        for row in table.iter(TABLE + "table-row"):
            cells = [
                self._cell(cell) for cell in row if cell.tag in (TABLE + "table-cell", TABLE + "covered-table-cell")
            ]
            if any(cells):
                rows.append(" | ".join(cells))
        return "\n".join(rows) or None

    def slides(self, presentation) -> Iterator[str]:
        for number, page in enumerate(presentation.iter(DRAW + "page"), start=1):
            title = ""
            texts: list[str] = []
            for shape in page:
                tag = shape.tag if isinstance(shape.tag, str) else ""
                if not tag.startswith(DRAW):
                    continue
                kind = shape.get(PRESENTATION + "class", "")
                if kind == "title" and not title:
                    title = " ".join(" ".join(self._shape(shape)).split())
                elif kind not in _SLIDE_FURNITURE:
                    texts.extend(self._shape(shape))
            notes = page.find(PRESENTATION + "notes")
            if notes is not None:
                spoken = [
                    text
                    for shape in notes
                    if isinstance(shape.tag, str) and shape.get(PRESENTATION + "class") == "notes"
                    for text in self._shape(shape)
                ]
                if spoken:
                    texts.append("Notes: " + "\n".join(spoken))
            if title and self.first_title is None:
                self.first_title = title
            if title or texts:
                yield "\n\n".join([f"## Slide {number}" + (f": {title}" if title else ""), *texts])


def _boxes(element, *, include_self: bool = False) -> Iterator:
    """The outermost frames, text boxes and shapes inside `element` that hold text blocks."""
    if include_self and any(child.tag in _BOX_CONTENT for child in element):
        yield element
        return
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == TEXT + "note" or tag in _SKIPPED_INLINE:
            continue
        if tag.startswith(DRAW) and any(inner.tag in _BOX_CONTENT for inner in child):
            yield child
        elif tag:
            yield from _boxes(child)


def _sheet_rows(table, reader: _Reader, *, cap: int) -> Iterator[tuple[int, list[str]]]:
    """A sheet's rows with their numbers. Repeated rows and cells (how ODF writes a run of equal ones)
    are expanded only where they hold text, and at most `cap` times; trailing empty ones never are."""
    number = 0
    for row in table.iter(TABLE + "table-row"):
        repeat = _count(row.get(TABLE + "number-rows-repeated"))
        runs: list[tuple[str, int]] = []
        for cell in row:
            if cell.tag in (TABLE + "table-cell", TABLE + "covered-table-cell"):
                runs.append((reader._cell(cell), _count(cell.get(TABLE + "number-columns-repeated"))))
        while runs and not runs[-1][0]:
            runs.pop()
        if not runs:
            number += repeat
            continue
        cells: list[str] = []
        for text, times in runs:
            cells.extend([text] * min(times, cap - len(cells)))
            if len(cells) >= cap:
                break
        for _ in range(min(repeat, cap)):
            number += 1
            yield number, cells
        number += repeat - min(repeat, cap)


def _count(value: str | None) -> int:
    return int(value) if value and value.isdigit() and int(value) > 0 else 1


ODT = Format(
    extensions=frozenset({"odt"}),
    parse=functools.partial(parse, what=".odt"),
    media_types={"odt": "application/vnd.oasis.opendocument.text"},
)
ODS = Format(
    extensions=frozenset({"ods"}),
    parse=functools.partial(parse, what=".ods"),
    media_types={"ods": "application/vnd.oasis.opendocument.spreadsheet"},
)
ODP = Format(
    extensions=frozenset({"odp"}),
    parse=functools.partial(parse, what=".odp"),
    media_types={"odp": "application/vnd.oasis.opendocument.presentation"},
)
