"""Word .docx: paragraphs and tables as Markdown-ish text (headings as #, list items as -, cells joined by |)."""

from __future__ import annotations

import io
import re

from memories.parsers.bounded_zip import DocumentArchive
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    """The .docx's paragraphs and tables as Markdown-ish text, read from a copy of the archive whose
    members were inflated within the budget."""
    archive = DocumentArchive(data, what=".docx", budget=budget, max_inflated=max_inflated)
    if "word/document.xml" not in archive.members:
        raise ExtractionError("this is not a valid .docx file (no word/document.xml inside)")
    data = archive.stored_copy()
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [
            block
            for element in document.element.body.iterchildren()
            if (block := _block(element, document)) is not None
        ]
    except ExtractionError:
        raise
    except Exception as exc:
        raise ExtractionError(f"the .docx is damaged and cannot be read ({type(exc).__name__})") from exc
    return Parsed(text="\n\n".join(blocks))


def _block(element, document) -> str | None:
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


FORMAT = Format(
    extensions=frozenset({"docx"}),
    parse=parse,
    media_types={"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
)
