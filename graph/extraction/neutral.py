"""Entities of text in a language the English pipeline does not read, by rules that hold in any
language written with capitals: multi-word names (each word capitalised), code identifiers, and
numbers with units of measure. Nothing here knows a language's grammar; the language's stop-words
(stopwords-iso) keep its articles and prepositions out of names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from graph.extraction.keys import canonical_key, display_name, is_meaningful, names_a_page
from graph.extraction.typing import LEGAL_FORMS, is_first_name, type_for_name
from graph.vocabulary import CONCEPT, ORG_NAME_HEADS, ORGANIZATION, PERSON, PLACE_HEADS, TECHNOLOGY

MAX_NAME_WORDS = 5
MAX_MENTIONS = 400

# Lower-case particles a name may hold between its capitalised words ("Universidad de Chile", "Ludwig
# van Beethoven", "Bank of England"); a conjunction or any other word ends the name.
_CONNECTORS = frozenset("de da do dos das del della di du la le van von der den ten ter of".split())
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_SAME_LINE_GAP = re.compile(r"[ \t]+")
_SENTENCE_END = re.compile(r"(?:^|[.!?…:;]\s+|\n\s*)$")
# Japanese writes loanwords and foreign names in katakana: a run of it that recurs is a term.
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")

# Code: calls, dotted module paths, snake_case and camelCase identifiers.
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?"
    r"|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Za-z_][A-Za-z0-9_]*\(\))(?![\w.])"
)
# A number with a unit of measure (of data, time, frequency, power, length, mass, volume, temperature).
_UNITS = "KB|MB|GB|TB|PB|KiB|MiB|GiB|TiB|ms|µs|ns|GHz|MHz|kHz|Hz|kW|kWh|MW|MWh|mAh|km|cm|mm|nm|kg|mg|ml|°C|°F"
_QUANTITY = re.compile(rf"(?<![0-9A-Za-z.,])\d+(?:[.,]\d+)?\s?(?:{_UNITS})(?![0-9A-Za-z])")


# Words that make a name an institution in the languages the detector meets most; German joins them
# to the front of a word ("Kreissparkasse", "Registergericht"), so those end a word there.
_INSTITUTION_WORDS = frozenset(
    "bank banco banque banca sparkasse university universität université universidad università "
    "universiteit hochschule institut institute instituto istituto ministerium ministère ministerio "
    "ministero caisse stiftung fondation fundación fondazione verband gesellschaft société sociedad "
    "società agentur agence agencia agenzia университет институт банк министерство "
    "federation föderation federación fédération federazione федерация федерации union unión unione "
    "союз coordinadora".split()
)
# Words that make a name a place, before or after the rest of it, in the languages above.
_PLACE_WORDS = PLACE_HEADS | frozenset(
    "plaza calle avenida paseo piazza via viale platz straße strasse allee place rue pont площадь улица проспект".split()
)
_INSTITUTION_ENDINGS = ("sparkasse", "gericht", "ministerium", "verband", "gesellschaft", "stiftung", "agentur")


def _name_type(name: str, key: str) -> str:
    """The type a capitalised name's own words settle in any language: a legal form or an
    institution's word makes an organisation, a known given name before one to three capitalised
    words a person; what the English rules know by name (a gazetteer, well-known organisations, the
    heads of places and events) holds too. Anything else stays a concept."""
    words = name.split()
    lowered = [w.lower().strip(".") for w in words]
    if lowered[-1] in LEGAL_FORMS or (
        not _PLACE_WORDS.intersection(lowered)  # "Union Square" and "Plaza Unión" are places
        and any(w in _INSTITUTION_WORDS or (len(w) > 8 and w.endswith(_INSTITUTION_ENDINGS)) for w in lowered)
    ):
        return ORGANIZATION
    known = type_for_name(name, key, CONCEPT)
    if known != CONCEPT:
        return known or CONCEPT
    if (
        2 <= len(words) <= 4
        and is_first_name(words[0])
        and all(w[:1].isupper() for w in words[1:])
        and not any(len(w) > 1 and w.isupper() and not _ROMAN.fullmatch(w) for w in words)
        and lowered[-1] not in ORG_NAME_HEADS | PLACE_HEADS
    ):
        return PERSON
    return CONCEPT


_ROMAN = re.compile(r"[IVX]{1,5}")  # "Louis XIV": a regnal number, not an acronym


@dataclass(frozen=True)
class NeutralFound:
    """One mention: its key, name, type and where it is in the text."""

    key: str
    name: str
    type: str
    start: int
    end: int


@lru_cache(maxsize=64)
def _stopwords(language: str) -> frozenset[str]:
    import stopwordsiso

    return (
        frozenset(w.lower() for w in stopwordsiso.stopwords(language))
        if stopwordsiso.has_lang(language)
        else frozenset()
    )


Token = tuple[int, int, str]


def _capitalised(word: str) -> bool:
    """An upper-case letter then lower-case ones, in any cased script, or an acronym of two to five
    capitals; a word in capitals throughout is a heading, not a name."""
    return word[0].isupper() and (not word.isupper() or 2 <= len(word) <= 5)


def _trim(words: list[Token], stop: frozenset[str]) -> list[Token]:
    """The name without stop-words or connectors at either end ("Die Deutsche Bahn" -> "Deutsche Bahn")."""
    while words and (words[0][2].lower() in stop or words[0][2].lower() in _CONNECTORS):
        words = words[1:]
    while (
        words
        and (words[-1][2].lower() in stop or words[-1][2].lower() in _CONNECTORS)
        and words[-1][2].lower() not in LEGAL_FORMS  # German's stop-words hold "AG"
    ):
        words = words[:-1]
    return words


def _runs(text: str) -> list[list[Token]]:
    """Runs of capitalised words on one line with nothing but spaces between them, each allowed one
    lower-case particle between two capitalised words."""
    tokens = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]

    def adjacent(a: Token, b: Token) -> bool:
        return bool(_SAME_LINE_GAP.fullmatch(text[a[1] : b[0]]))

    runs: list[list[Token]] = []
    i = 0
    while i < len(tokens):
        if not _capitalised(tokens[i][2]):
            i += 1
            continue
        run, j = [tokens[i]], i
        while j + 1 < len(tokens) and adjacent(tokens[j], tokens[j + 1]):
            following = tokens[j + 1]
            if _capitalised(following[2]):
                run.append(following)
                j += 1
                continue
            lowered = following[2].lower()
            if (
                lowered in _CONNECTORS
                and j + 2 < len(tokens)
                and adjacent(following, tokens[j + 2])
                and _capitalised(tokens[j + 2][2])
            ):
                run += [following, tokens[j + 2]]
                j += 2
                continue
            break
        runs.append(run)
        i = j + 1
    return runs


def _names(text: str, language: str) -> list[NeutralFound]:
    stop = _stopwords(language)
    lowered = {m.group() for m in _WORD.finditer(text) if m.group().islower()}
    found: list[NeutralFound] = []
    for words in _runs(text):
        # A sentence's first word is capitalised by its place: it is part of a name only when the text
        # never writes it in lower case.
        if _SENTENCE_END.search(text[: words[0][0]]) and words[0][2].lower() in lowered:
            words = words[1:]
        words = _trim(words, stop)
        # A role or title written before a person's name, capitalised as every German noun is
        # ("Geschäftsführer Markus Oestreicher"), is not part of the name.
        for at in range(1, len(words) - 1):
            if is_first_name(words[at][2]) and not is_first_name(words[0][2]):
                words = words[at:]
                break
        capitalised = [w for _, _, w in words if _capitalised(w)]
        # Two capitalised words at least, one of them more than an acronym ("PDF MD" is no name).
        if len(capitalised) < 2 or all(w.isupper() for w in capitalised) or len(words) > MAX_NAME_WORDS:
            continue
        start, end = words[0][0], words[-1][1]
        name = display_name(text[start:end])
        key = canonical_key(name, CONCEPT)
        if not is_meaningful(name, key):
            continue
        kind = _name_type(name, key)
        if kind != CONCEPT:
            key = canonical_key(name, kind)
        if names_a_page(key, kind):
            continue
        found.append(NeutralFound(key, name, kind, start, end))
    return found


def neutral_spans(text: str, language: str) -> list[NeutralFound]:
    """The entities of a text in `language` (an ISO 639-1 code) found without a language model, in text
    order: multi-word capitalised names, code identifiers and quantities, at most MAX_MENTIONS."""
    found = _names(text, language)
    for match in _IDENTIFIER.finditer(text):
        name = match.group()
        key = canonical_key(name, TECHNOLOGY)
        if is_meaningful(name, key):
            found.append(NeutralFound(key, name, TECHNOLOGY, match.start(), match.end()))
    if language == "ja":
        runs = [m for m in _KATAKANA.finditer(text) if m.group().strip("ー")]
        counts: dict[str, int] = {}
        for match in runs:
            counts[match.group()] = counts.get(match.group(), 0) + 1
        for match in runs:
            if counts[match.group()] > 1:
                found.append(NeutralFound(match.group(), match.group(), CONCEPT, match.start(), match.end()))
    for match in _QUANTITY.finditer(text):
        name = " ".join(match.group().split())
        found.append(NeutralFound(name.lower(), name, CONCEPT, match.start(), match.end()))
    found.sort(key=lambda item: item.start)
    return found[:MAX_MENTIONS]
