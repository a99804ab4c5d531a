"""Authors cited in a text: the surnames a paper writes as its citations do ("Venkatesh (2000)",
"Bagozzi et al.", "(Davis, Bagozzi and Warshaw, 1989)", a reference list's "Bagozzi, R. P.").
A surname alone is an unknown word to every other rule, and was typed a concept. Pure: a text in,
names out; language-neutral, as citations are written alike in most languages."""

from __future__ import annotations

import re

from core.language import calendar_words

# A surname: a capital, then small letters (an apostrophe or a hyphen may join parts: "O'Neil",
# "Lévy-Bruhl"); words in capitals are acronyms, which cite organisations ("WHO (2020)").
_SURNAME = r"[^\W\d_a-z][^\W\d_A-Z]+(?:['’-][^\W\d_][^\W\d_A-Z]+)?"
_YEAR = r"(?:19|20)\d\d[a-z]?"
_AND = r"(?:,?[ \t]+(?:and|&|und|et|y)[ \t]+|,[ \t]*)"

_BY_YEAR = (
    # "Venkatesh (2000)", "Davis and Venkatesh (1996)", "Davis, Bagozzi and Warshaw\n(1989)"
    re.compile(rf"(?P<names>{_SURNAME}(?:{_AND}{_SURNAME}){{0,3}})\s*\((?P<year>{_YEAR}|n\.d\.)[,;)]"),
    # "(Davis, Bagozzi and Warshaw, 1992", "(Venkatesh & Davis, 1996", "(Bagozzi 2007"
    re.compile(rf"\((?P<names>{_SURNAME}(?:{_AND}{_SURNAME}){{0,3}}),?[ \t]+(?P<year>{_YEAR})\b"),
)
# Forms no other text takes: "Bagozzi et al.", and a reference list's "Bagozzi, R. P." or "Davis,
# F., Bagozzi, R.P., & Warshaw, P.R.".
_AUTHOR_FORMS = (
    re.compile(rf"(?P<names>{_SURNAME})[ \t]+et[ \t]+al\b"),
    re.compile(rf"(?m)(?:^|,[ \t]+&?[ \t]*|[ \t]&[ \t]+)(?P<names>{_SURNAME}),[ \t]+[A-Z]\.(?:[ \t]?[A-Z]\.)*"),
)
_NAME = re.compile(_SURNAME)
_JOINERS = frozenset(["and", "und", "et", "y"])


def cited_authors(text: str) -> frozenset[str]:
    """The surnames the text cites as authors: each written once in an author's own form (et al., a
    reference), or with two different years. One year may be a product's version ("Microsoft Office
    (2007)"), and a citation read twice where a document's chunks overlap is still one; a month or a
    weekday is never an author ("January (2001)")."""
    strong: set[str] = set()
    for pattern in _AUTHOR_FORMS:
        for match in pattern.finditer(text):
            strong.update(_names(match))
    years: dict[str, set[str]] = {}
    for pattern in _BY_YEAR:
        for match in pattern.finditer(text):
            for name in _names(match):
                years.setdefault(name, set()).add(match.group("year"))
    cited = strong | {name for name, written in years.items() if len(written) >= 2}
    calendar = calendar_words()
    return frozenset(name for name in cited if name.lower() not in calendar)


def _names(match: re.Match) -> list[str]:
    return [name for name in _NAME.findall(match.group("names")) if name.lower() not in _JOINERS]
