"""Whether a title a document declares (its properties, metadata or first heading) is a real title, or a
placeholder a program wrote there ("Untitled", "Document1", "Microsoft Word - plan.doc"); and whether
the first paragraph of a prose document that declares none is a heading line to title it by."""

from __future__ import annotations

import re
from functools import cache

from core.language import calendar_words

MAX_TITLE_CHARS = 300
_PLACEHOLDER = re.compile(
    r"""^(
        untitled(\s+document)?(\s*\d+)?|new\s+document|document\s*\d*|doc\d+|title|slide\s*\d*|
        (powerpoint\s+)?presentation\s*\d*|(excel\s+)?(work)?book\s*\d*|sheet\s*\d*|
        microsoft\s+(word|excel|powerpoint)(\s+-\s+.*)?|
        .*\.(docx?|dotx?|xlsx?|pptx?|pdf|odt|ods|odp|rtf|txt|html?|epub)
    )$""",
    re.IGNORECASE | re.VERBOSE,
)


def declared_title(value: object) -> str | None:
    """The title, its whitespace collapsed and cut at MAX_TITLE_CHARS; None when it is empty, has no
    letter or digit, or is a placeholder."""
    if not isinstance(value, str):
        return None
    title = " ".join(value.split())
    if not any(ch.isalnum() for ch in title) or _PLACEHOLDER.match(title):
        return None
    return title[:MAX_TITLE_CHARS].rstrip()


# A heading line is short: a first paragraph longer than this is the document's opening prose.
MAX_HEADING_CHARS = 100
MAX_HEADING_WORDS = 12
# What ends a sentence, a clause or a form label, in Latin and CJK punctuation.
_SENTENCE_END = tuple(".!?:;,…。！？：；，、")
# Fill-in blanks, dot leaders and tick boxes: a form's line, not its heading.
_FORM_FIELD = re.compile(r"_{3,}|\.{4,}|…{2,}|[☐☑☒□■]")
# A list item, or a line of markup or a comment ("# Notes"): plain text is not read as Markdown.
_LIST_MARKER = re.compile(r"^(?:[-*•–—+>]\s|\d+[.)]\s|#)")
_WEB_OR_MAIL = re.compile(r"://|www\.|\S@\S")
_LETTERS = re.compile(r"[^\W\d_]+")
# "Chapter 1", "Part IV", "Annexe B": the number of a part of the document, which names no document.
_PART_NUMBER = re.compile(
    r"""^(chapter|chap|part|section|book|volume|vol|appendix|annex|article|lesson|unit|
    chapitre|partie|livre|annexe|kapitel|teil|abschnitt|anhang|capítulo|capitulo|parte|sección|seccion|
    libro|anexo|capitolo|sezione|hoofdstuk|deel|bijlage|глава|часть|раздел|том)
    \.?\s+(\d+|[ivxlcdm]+|[a-z])\.?$""",
    re.IGNORECASE | re.VERBOSE,
)
# The words a written date is made of besides its numbers: month and weekday names and their
# abbreviations (core.language.calendar_words), and the little words between them.
_DATE_JOINERS = frozenset("the of de del du le la der den am um el y e st nd rd th er h".split())


@cache
def _date_words() -> frozenset[str]:
    return _DATE_JOINERS | calendar_words(abbreviated=True)


def heading_title(paragraph: str | None, *, styled: bool = False) -> str | None:
    """A prose document's first paragraph as its title, when it reads as a heading line: short (at most
    MAX_HEADING_CHARS and MAX_HEADING_WORDS), one line, with letters, not ending as a sentence or a
    form label does, and not a date, a list item, an address or a part's number ("Chapter 1"). A
    paragraph the writer styled as a heading or title (`styled`) is one whatever it looks like. The
    caller says which paragraph is the first and that it stands alone; None when it is no heading.
    PDFs do not use it: their first line is wherever the layout put text."""
    if paragraph is None:
        return None
    if styled:
        return declared_title(paragraph)
    line = paragraph.strip()
    if not line or "\n" in line or len(line) > MAX_HEADING_CHARS or len(line.split()) > MAX_HEADING_WORDS:
        return None
    words = _LETTERS.findall(line)
    if not words or line.endswith(_SENTENCE_END) or _FORM_FIELD.search(line):
        return None
    if _LIST_MARKER.match(line) or _WEB_OR_MAIL.search(line) or _PART_NUMBER.match(line):
        return None
    if any(ch.isdigit() for ch in line) and all(_is_date_word(word) for word in words):
        return None
    return declared_title(line)


def opening_heading(text: str) -> str | None:
    """The heading line plain text opens with (see heading_title): its first line, standing alone
    before a blank line. A first line that is blank, or that runs on into the next line, is none."""
    # Only the start is looked at: a heading line and what follows it fit in far less.
    lines = text[: MAX_HEADING_CHARS * 20].lstrip("\ufeff").split("\n", 2)
    if len(lines) < 3 or lines[1].strip() or not lines[2].strip():
        # One line and nothing after it heads nothing; a line the next one continues is a paragraph.
        return None
    return heading_title(lines[0])


def _is_date_word(word: str) -> bool:
    word = word.lower()
    # Abbreviated names ("Dec", "Okt", "sept") are the start of a full one.
    names = _date_words()
    return word in names or (len(word) >= 3 and any(name.startswith(word) for name in names))
