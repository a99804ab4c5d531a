"""Towns in postal addresses: the name a postcode stands beside on an address line is a town, in any
language ("D-63571 Gelnhausen", "75008 Paris", "1012 AB Amsterdam", "Seattle, WA 98109",
"Chennai - 600061"). Invoices, receipts and letters hold such lines, and the town on them was found
as a concept, or not at all, where the gazetteer does not know it. Pure: a text in, spans out."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

# One word of a town's name: a capital, then letters (an apostrophe or a hyphen may join two parts:
# "Saint-Étienne", "Bad Homburg vor der Höhe" is cut at "vor").
_WORD = r"[^\W\d_a-zß-ÿ][^\W\d_]+(?:['’-][^\W\d_]+)*"
_TOWN = rf"(?P<town>{_WORD}(?:[ \t]{_WORD}){{0,2}})"
# What may follow a town on its line: the line's end, a comma, a dash, a bracket or a country code.
_AFTER = r"(?=[ \t]*(?:$|,|[-–(/|]|[ \t]+[A-Z]{2}\b))"
# What may stand before a postcode: the line's start, a comma or a dash between parts of one line.
_BEFORE = r"(?:^|[,–-][ \t]+|\|[ \t]*)"

_PATTERNS = (
    # A postcode before the town: five digits, or four with a country's letter prefix (D-, CH-) or a
    # Dutch postcode's two letters ("1012 AB"); four digits alone are too often a year or a number.
    re.compile(
        rf"(?m){_BEFORE}(?:(?:[A-Z]{{1,2}}-)?\d{{5}}|[A-Z]{{1,2}}-\d{{4}}|\d{{4}}[ \t]?[A-Z]{{2}})[ \t]+{_TOWN}{_AFTER}"
    ),
    # A town before a state's code and a ZIP code, as in North America ("Seattle, WA 98109-5210").
    re.compile(rf"(?m)(?:^|,[ \t]*){_TOWN},[ \t]+[A-Z]{{2}}[ \t]+\d{{5}}(?:-\d{{4}})?\b"),
    # A town opening a line of an address's parts that holds a postcode and ends in a country's code
    # ("Yuen Long, N.T., 0000, HK", "Seattle, WA 98109-5210, US").
    re.compile(rf"(?m)^[ \t]*{_TOWN},[^,\n]*(?:,[^,\n]*)?\d[^,\n]*,[ \t]*[A-Z]{{2}}[ \t]*$"),
    # A town before a six-digit postcode, as in India ("Chennai - 600061", "Gurgaon -122001 | Phone").
    re.compile(rf"(?m)(?:^|,[ \t]*){_TOWN}[ \t]*[-–]?[ \t]*\d{{3}}[ \t]?\d{{3}}(?=[ \t]*(?:$|[|,;]))"),
)


class Town(NamedTuple):
    name: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _currency_words() -> frozenset[str]:
    """The words of every currency's name in the languages invoices here are most often written in,
    singular and plural: an amount ("50000 Euro", "12000 Dollars") is written as a postcode and a town are."""
    from babel.numbers import get_currency_name, list_currencies

    words = set()
    for locale in ("en", "de", "fr", "es", "nl", "it"):
        for code in list_currencies():
            for word in get_currency_name(code, locale=locale).lower().split():
                words.update((word, word + "s"))
    return frozenset(words)


# A text whose lines give more than this many names after five-digit numbers is a table (a bank
# statement's references and descriptions: "20231 Direct Debit", "20232 Transfer"), not addresses.
MAX_POSTCODE_TOWNS = 3


def address_towns(text: str) -> list[Town]:
    """The towns of the text's address lines, in text order, each once per place it is written."""
    found: dict[int, Town] = {}
    currencies = _currency_words()
    for index, pattern in enumerate(_PATTERNS):
        matches = list(pattern.finditer(text))
        if index == 0 and len({match.group("town") for match in matches}) > MAX_POSTCODE_TOWNS:
            continue
        for match in matches:
            name, start = match.group("town"), match.start("town")
            last = name.split()[-1].lower()
            if last in currencies:
                continue  # an amount ends in its currency ("50000 Euro"); "New Delhi" is a town
            if name.isupper() and len(name) <= 4:
                continue  # an acronym after a number ("12345 BMS"); "69100 VILLEURBANNE" is a town
            if index == 0 and last in _not_nouns():
                continue  # a reference's description ("20231 Direct Debit", "Payment Received")
            found.setdefault(start, Town(name, start, match.end("town")))
    return sorted(found.values(), key=lambda town: town.start)


@lru_cache(maxsize=1)
def _not_nouns() -> frozenset[str]:
    """English verbs, adjectives and adverbs (the model's word tables): a town's name does not end in
    one after a postcode, a statement's line does ("Transfer", "Payment Received")."""
    from graph.extraction.lexicon import words_of

    return words_of("verb") | words_of("adj") | words_of("adv")
