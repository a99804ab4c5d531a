"""Word .docx, Transitional or Strict: its headers, the body in document order (headings as #, list items
as -, table rows as cells joined by |, a text box's text after its paragraph), footnotes, endnotes and
footers; the title from the core properties, else the first Title paragraph, the heading line the body
opens with (memories.parsers.titles.heading_title) or the first Heading 1 paragraph."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from memories.parsers import ooxml
from memories.parsers.bounded_zip import DocumentArchive
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.titles import declared_title, heading_title

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
# Never text: properties, deleted and moved-away runs, field codes (their results are read), and the
# fallback copy of content that a choice holds too (a text box is in both).
_NOT_TEXT = {W + "pPr", W + "rPr", W + "del", W + "moveFrom", W + "instrText", W + "delText", W + "fldData"}
_NOT_TEXT |= {W + "sdtPr", W + "sdtEndPr", MC + "Fallback"}
_INLINE = {W + "t": None, M + "t": None, W + "tab": "\t", W + "ptab": "\t", W + "br": "\n", W + "cr": "\n"}
_INLINE |= {W + "noBreakHyphen": "-"}
_CONTAINERS = {W + "sdt", W + "sdtContent", W + "customXml", W + "smartTag", W + "ins", W + "moveTo"}


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    archive = ooxml.open_package(data, what=".docx", budget=budget, max_inflated=max_inflated)
    try:
        return _Document(archive).parsed()
    except ExtractionError:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
        raise ooxml.damaged(".docx", exc) from exc


class _Document:
    def __init__(self, archive: DocumentArchive):
        self.archive = archive
        self.main = ooxml.main_part(archive, folder="word", default="word/document.xml")
        self.root = ooxml.part_xml(archive, self.main)
        if self.root is None or self.root.tag != W + "document":
            raise ExtractionError("this is not a valid .docx file (its main part is not a Word document)")
        self.rels = {rel.id: rel for rel in ooxml.relationships(archive, self.main)}
        styles = next((rel.target for rel in self.rels.values() if rel.kind == "styles"), None)
        self.styles = _Styles(ooxml.part_xml(archive, styles) if styles else None)
        self.first_title: str | None = None
        self.first_heading: str | None = None
        # The body's first block, when it is a paragraph: its text and whether a heading or title style
        # made it one. None until the first block is read; a table first leaves it empty.
        self.opening: tuple[str, bool] | None = None
        self.opened = False

    def parsed(self) -> Parsed:
        body = self.root.find(W + "body")
        blocks = list(self._blocks(body, in_body=True)) if body is not None else []
        headers, footers = self._headers_and_footers()
        notes = [block for kind in ("footnotes", "endnotes") for block in self._notes(kind)]
        # A Title paragraph anywhere is the title its writer marked. Else a heading line the body opens
        # with names the document, before a Heading 1 further on (which names a section).
        opening = heading_title(self.opening[0], styled=self.opening[1]) if self.opening else None
        title = (
            ooxml.core_title(self.archive)
            or declared_title(self.first_title)
            or opening
            or declared_title(self.first_heading)
        )
        return Parsed(text="\n\n".join(headers + blocks + notes + footers), title=title)

    def _blocks(self, container, *, in_body: bool = False) -> Iterator[str]:
        """Each block of a body, cell, text box, header or note as text."""
        for element in container:
            tag = element.tag
            if tag == W + "p":
                yield from self._paragraph(element, in_body=in_body)
            elif tag == W + "tbl":
                if table := self._table(element):
                    self.opened = self.opened or in_body
                    yield table
            elif tag in _CONTAINERS:
                yield from self._blocks(element, in_body=in_body)
            elif tag == MC + "AlternateContent" and (chosen := _alternative(element)) is not None:
                yield from self._blocks(chosen, in_body=in_body)

    def _paragraph(self, paragraph, *, in_body: bool) -> Iterator[str]:
        text = _text(paragraph).strip()
        if text:
            properties = paragraph.find(W + "pPr")
            style = properties.find(W + "pStyle") if properties is not None else None
            kind, level = self.styles.kind(style.get(W + "val") if style is not None else None)
            numbered = properties is not None and properties.find(W + "numPr") is not None
            if in_body and not self.opened:
                self.opened = True
                # A list item first, numbered or in a list style, opens a list, not a heading line.
                if kind != "list" and not numbered:
                    self.opening = (text, kind in ("title", "heading"))
            if in_body and kind == "title" and self.first_title is None:
                self.first_title = text
            if in_body and kind == "heading" and level == 1 and self.first_heading is None:
                self.first_heading = text
            if kind == "heading":
                yield "#" * level + " " + text
            elif kind == "title":
                yield "# " + text
            elif kind == "list" or numbered:
                yield "- " + text
            else:
                yield text
        for box in _boxes(paragraph):
            yield from self._blocks(box, in_body=False)

    def _table(self, table) -> str | None:
        rows = []
        for row in _children(table, W + "tr"):
            cells = [" ".join(_text(cell, flat=True).split()) for cell in _children(row, W + "tc")]
            if any(cells):
                rows.append(" | ".join(cells))
        return "\n".join(rows) or None

    def _headers_and_footers(self) -> tuple[list[str], list[str]]:
        """The text of the headers and footers the sections show, each distinct one once."""
        found: dict[str, list[str]] = {"headerReference": [], "footerReference": []}
        for section in self.root.iter(W + "sectPr"):
            for reference in section:
                tag = reference.tag if isinstance(reference.tag, str) else ""
                kind = tag[len(W) :] if tag.startswith(W) else ""
                rel = self.rels.get(reference.get(R + "id", ""))
                if kind in found and rel is not None and rel.target not in found[kind]:
                    found[kind].append(rel.target)
        seen: set[str] = set()
        texts: dict[str, list[str]] = {"headerReference": [], "footerReference": []}
        for kind, parts in found.items():
            for part in parts:
                root = ooxml.part_xml(self.archive, part)
                for block in self._blocks(root) if root is not None else ():
                    if block not in seen:
                        seen.add(block)
                        texts[kind].append(block)
        return texts["headerReference"], texts["footerReference"]

    def _notes(self, kind: str) -> Iterator[str]:
        rel = next((rel for rel in self.rels.values() if rel.kind == kind), None)
        root = ooxml.part_xml(self.archive, rel.target) if rel is not None else None
        if root is None:
            return
        for note in root:
            if note.get(W + "type", "normal") == "normal":  # not the separator lines
                yield from self._blocks(note)


def _text(element, *, flat: bool = False) -> str:
    """The text of a paragraph, leaving out its text boxes (read as blocks of their own); `flat` keeps
    them and every nested paragraph, a space between paragraphs (for a table cell)."""
    parts: list[str] = []
    _collect(element, parts, flat=flat)
    return "".join(parts)


def _collect(element, parts: list[str], *, flat: bool) -> None:
    for child in element:
        tag = child.tag
        if not isinstance(tag, str) or tag in _NOT_TEXT or (tag == W + "txbxContent" and not flat):
            continue
        if tag in _INLINE:
            parts.append(_INLINE[tag] or child.text or "")
        elif tag == MC + "AlternateContent":
            if (chosen := _alternative(child)) is not None:
                _collect(chosen, parts, flat=flat)
        else:
            _collect(child, parts, flat=flat)
            if flat and tag == W + "p":
                parts.append(" ")


def _boxes(element) -> Iterator:
    """The outermost text boxes inside a paragraph, each once (not in the fallback copy)."""
    for child in element:
        tag = child.tag
        if not isinstance(tag, str) or tag == MC + "Fallback":
            continue
        if tag == W + "txbxContent":
            yield child
        elif tag == MC + "AlternateContent":
            if (chosen := _alternative(child)) is not None:
                yield from _boxes(chosen)
        else:
            yield from _boxes(child)


def _alternative(element):
    """The branch of markup-compatibility content that is read: the first choice, else the fallback."""
    chosen = element.find(MC + "Choice")
    return chosen if chosen is not None else element.find(MC + "Fallback")


def _children(element, tag: str) -> Iterator:
    """The `tag` children of a table or row, through the content controls that may wrap them."""
    for child in element:
        if child.tag == tag:
            yield child
        elif child.tag in _CONTAINERS:
            yield from _children(child, tag)


_HEADING = re.compile(r"heading\s*(\d)")


class _Styles:
    """What a paragraph style makes a paragraph: a heading of some level, the title, a list item."""

    def __init__(self, root):
        self.styles: dict[str, tuple[str, str | None, int | None]] = {}
        self.default: str | None = None
        for style in root.iter(W + "style") if root is not None else ():
            if style.get(W + "type", "paragraph") != "paragraph" or not style.get(W + "styleId"):
                continue
            name = style.find(W + "name")
            based = style.find(W + "basedOn")
            outline = style.find(f"{W}pPr/{W}outlineLvl")
            level = outline.get(W + "val", "") if outline is not None else ""
            self.styles[style.get(W + "styleId")] = (
                (name.get(W + "val", "") if name is not None else "").lower(),
                based.get(W + "val") if based is not None else None,
                int(level) + 1 if level.isdigit() and int(level) < 9 else None,
            )
            if style.get(W + "default") in ("1", "true", "on"):
                self.default = style.get(W + "styleId")
        self.kind = cache(self._kind)

    def _kind(self, style_id: str | None) -> tuple[str | None, int]:
        current = style_id if style_id in self.styles else self.default
        for _ in range(10):  # styles are based on others; a loop among them ends here
            if current is None or current not in self.styles:
                break
            name, based, outline = self.styles[current]
            if name == "title":
                return "title", 1
            if match := _HEADING.fullmatch(name):
                return "heading", int(match.group(1))
            if outline is not None:
                return "heading", outline
            if name.startswith("list"):
                return "list", 0
            current = based
        return None, 0


FORMAT = Format(
    extensions=frozenset({"docx"}),
    parse=parse,
    media_types={"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
)
