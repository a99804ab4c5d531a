"""PowerPoint .pptx, read by python-pptx from a bounded copy: each slide as "## Slide N: its title", then
the text of its shapes (groups included) and tables in their order, then its speaker notes; the title
from the core properties, else the first slide's title."""

from __future__ import annotations

import io

from memories.parsers import ooxml
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.titles import declared_title


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    archive = ooxml.open_package(data, what=".pptx", budget=budget, max_inflated=max_inflated)
    ooxml.main_part(archive, folder="ppt", default="ppt/presentation.xml")
    # Images, media and embedded files are carried empty: python-pptx never needs their bytes for text.
    copy = archive.stored_copy(keep=ooxml.is_xml_part, rewrite=ooxml.transitional)
    from pptx import Presentation

    try:
        presentation = Presentation(io.BytesIO(copy))
        blocks: list[str] = []
        first_title = None
        for number, slide in enumerate(presentation.slides, start=1):
            title_shape = slide.shapes.title
            heading = " ".join(" ".join(_shape_texts(title_shape)).split()) if title_shape is not None else ""
            first_title = first_title or heading or None
            texts = [
                text
                for shape in slide.shapes
                if shape != title_shape and not _furniture(shape)
                for text in _shape_texts(shape)
            ]
            notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
            if notes is not None and (spoken := _lines(notes.text)):
                texts.append(f"Notes: {spoken}")
            if heading or texts:
                blocks.append("\n\n".join([f"## Slide {number}" + (f": {heading}" if heading else ""), *texts]))
        title = declared_title(presentation.core_properties.title) or declared_title(first_title)
    except ExtractionError:
        raise
    except Exception as exc:  # python-pptx raises many kinds on a damaged file; none may reach a person
        raise ooxml.damaged(".pptx", exc) from exc
    return Parsed(text="\n\n".join(blocks), title=title)


def _shape_texts(shape) -> list[str]:
    """The text of one shape: its text frame, its table's rows, or each shape of a group."""
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        return [text for inner in shape.shapes for text in _shape_texts(inner)]
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = []
        for row in shape.table.rows:
            cells = [" ".join(cell.text.split()) for cell in row.cells]
            if any(cells):
                rows.append(" | ".join(cells))
        return ["\n".join(rows)] if rows else []
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        text = _lines(shape.text_frame.text)
        return [text] if text else []
    return []


def _furniture(shape) -> bool:
    """The slide number, date, header and footer placeholders: the same on every slide."""
    from pptx.enum.shapes import PP_PLACEHOLDER

    if not shape.is_placeholder:
        return False
    try:
        kind = shape.placeholder_format.type
    except ValueError:  # a placeholder type python-pptx does not know
        return False
    return kind in (PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.HEADER)


def _lines(text: str) -> str:
    """python-pptx writes a line break inside a paragraph as a vertical tab."""
    return "\n".join(line.strip() for line in text.replace("\v", "\n").splitlines() if line.strip())


FORMAT = Format(
    extensions=frozenset({"pptx"}),
    parse=parse,
    media_types={"pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
)
