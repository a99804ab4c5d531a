"""Text that is layout, not prose, blanked before entities are read: markup tags (a feed or a page
stored as its source) and the header rows of tables (an invoice's "Pos. Menge Beschreibung Rabatt %").
Blanking keeps every other character's offset, so mentions still point into the stored text."""

from __future__ import annotations

import re

from graph.extraction.typing import is_first_name

# A tag, a declaration, a processing instruction or a comment: "<rdf:RDF", "<?xml …?>", "</a>",
# "<!-- … -->". An opening tag may run over lines (its attributes); "a < b" is no tag.
_TAG = re.compile(
    r"<!--.*?-->|<\?[A-Za-z][^<>]{0,2000}?\?>|<!\[CDATA\[|\]\]>"
    r"|</?[A-Za-z][\w.-]*(?::[\w.-]+)?(?:\s[^<>]{0,2000}?)?/?>",
    re.DOTALL,
)
# Tags this many or more in a text make it markup (a feed, a page's source), not prose that quotes one.
MARKUP_MIN_TAGS = 3


def _blank(match: re.Match) -> str:
    return "".join(ch if ch == "\n" else " " for ch in match.group())


def mask_markup(text: str) -> str:
    """The text with its markup tags blanked, when it holds a few (prose that quotes one "<b>" keeps it)."""
    if "<" not in text or len(_TAG.findall(text, 0, 200_000)) < MARKUP_MIN_TAGS:
        return text
    return _TAG.sub(_blank, text)


# A table's header row: a line of four or more labels, each capitalised or an abbreviation or a symbol,
# with at most two short lower-case words between them ("Prijs per stuk"), and no figure, comma,
# sentence or given name in it. A line of prose, a title with its articles, a list of people, an item
# row with its amounts are none.
HEADER_MIN_LABELS = 4
_HEADER_SHORT_WORD = 4
_HEADER_MAX_LOWER = 2
_SYMBOL = re.compile(r"[%€$£¥#№/&+*|-]+")


def _is_header_row(line: str) -> bool:
    words = line.split()
    if len(words) < HEADER_MIN_LABELS or len(line) > 200 or any(ch.isdigit() or ch == "," for ch in line):
        return False
    labels = lower = 0
    for word in words:
        abbreviated = word.endswith(".") and len(word) <= 6  # "Pos.", "Nr.", "incl."
        bare = word[:-1] if abbreviated else word
        if _SYMBOL.fullmatch(bare) or (abbreviated and bare.islower()):
            continue
        if not bare.replace("-", "").isalpha():
            return False  # "Total:" or "done." ends a field or a sentence
        if bare[0].isupper():
            if is_first_name(bare):
                return False  # "Anna Schmidt Peter Müller" lists people
            labels += 1
        elif len(bare) <= _HEADER_SHORT_WORD:
            lower += 1
        else:
            return False
    return labels >= HEADER_MIN_LABELS and lower <= _HEADER_MAX_LOWER and labels > 2 * lower


def mask_header_rows(text: str) -> str:
    """The text with the header rows of its tables blanked (see _is_header_row). For languages read
    without a model, where every run of capitalised words would otherwise be taken for a name; German
    capitalises its nouns, so "Menge Beschreibung Rabatt" looks like one."""
    lines = text.split("\n")
    masked = [(" " * len(line)) if _is_header_row(line) else line for line in lines]
    return "\n".join(masked) if masked != lines else text
