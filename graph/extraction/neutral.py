"""Entities of text in a language the English pipeline does not read, by rules that hold in any
language written with capitals: multi-word names (each word capitalised), code identifiers, and
numbers with units of measure. Nothing here knows a language's grammar; the language's stop-words
(stopwords-iso) keep its articles and prepositions out of names. Japanese, which has no capitals,
is read by its dictionary's parts of speech instead (graph.extraction.japanese)."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache

from core.inflection import DECLINED, is_adjective, names_a_place, nominative
from graph.extraction.japanese import japanese_names
from graph.extraction.keys import canonical_key, display_name, is_meaningful, names_a_page
from graph.extraction.lexicon import english_words
from graph.extraction.typing import LEGAL_FORMS, is_first_name, type_for_name
from graph.vocabulary import (
    CONCEPT,
    LOCATION,
    ORG_NAME_HEADS,
    ORGANIZATION,
    PERSON,
    PLACE_HEADS,
    TECHNOLOGY,
)

MAX_NAME_WORDS = 5
MAX_MENTIONS = 400

# Lower-case particles a name may hold between its capitalised words ("Universidad de Chile", "Ludwig
# van Beethoven", "Bank of England"); a conjunction or any other word ends the name.
_CONNECTORS = frozenset("de da do dos das del della di du la le van von der den ten ter of".split())
# A word: letters of one script, so that a Latin name in Japanese or Chinese text ends where the
# kana or Chinese characters begin ("App Storeおよび" is "App Store" and a word after it).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_LETTER = rf"[^\W\d_{_CJK}]"
_WORD = re.compile(rf"{_LETTER}+(?:['’-]{_LETTER}+)*|[{_CJK}]+")
# What may stand between two words of one name: spaces on one line, and an elided particle ("Quai
# d’Orsay", "Place de l’Étoile"; the name's word starts after the apostrophe, see _without_elision).
_SAME_LINE_GAP = re.compile(r"[ \t]+(?:[dl][’'])?")
# Languages where one capitalised word is no sign of a name: those that capitalise every noun, and
# those whose script has no capitals (a Latin word in them is another language's, see neutral_spans).
_NOUNS_CAPITALISED = frozenset({"de", "lb"})
_UNCASED = frozenset("ja zh ko th ar he fa ur hi bn ta te ml kn gu pa mr ne si my km lo ka am".split())
# What comes before a word inside a sentence: a letter, a digit, or a comma, closing bracket or
# quote, then one space (two or more, or a tab, separate a table's columns).
_MID_SENTENCE = re.compile(r"[^\W\d_][,)»”\"']? $|[,)»”\"'] $")
_SENTENCE_END = re.compile(r"(?:^|[.!?…:;]\s+|\n\s*)$")

# A word in Latin letters inside Japanese text, capitalised or an acronym ("ServiceMix", "Celeron",
# "JBI"): Japanese writes its own words in kana and kanji, so such a word is a name or a term.
_LATIN_WORD = re.compile(
    r"(?<![A-Za-z0-9_.@/:\u00c0-\u024f-])(?:[A-Z][a-z]+(?:[A-Z][a-z]+)*|[A-Z]{2,5})(?![A-Za-z0-9_@/\u00c0-\u024f-])"
)
# What stands beside a word of a Japanese sentence: kana, kanji, or Japanese brackets and punctuation.
_JAPANESE_NEIGHBOUR = re.compile(rf"[{_CJK}「」『』（）、。・]")

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


def _name_type(name: str, key: str) -> str | None:
    """The type a capitalised name's own words settle in any language: a legal form or an
    institution's word makes an organisation, a known given name before one to three capitalised
    words a person; what the English rules know by name (a gazetteer, well-known organisations, the
    heads of places and events) holds too. Anything else stays a concept; None for what is never an
    entity (a weekday's or a month's name, a legal form alone: typing.type_for_name)."""
    known = type_for_name(name, key, CONCEPT)
    if known is None:
        return None  # no entity at all ("Lundi", "Dimanche" on an invoice's opening hours, "Limited")
    words = name.split()
    lowered = [w.lower().strip(".") for w in words]
    if lowered[-1] in LEGAL_FORMS or (
        not _PLACE_WORDS.intersection(lowered)  # "Union Square" and "Plaza Unión" are places
        and any(w in _INSTITUTION_WORDS or (len(w) > 8 and w.endswith(_INSTITUTION_ENDINGS)) for w in lowered)
    ):
        return ORGANIZATION
    if known != CONCEPT:
        return known
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


# An elided article or preposition before a name ("l’OTAN", "d’Airbus", "dell’Europa"): the name
# starts after the apostrophe.
_ELISION = re.compile(r"[^\W\d_A-ZÀ-ÞА-ЯЁ]{1,5}[’'](?=[A-ZÀ-ÞА-ЯЁ])")


def _without_elision(start: int, end: int, word: str) -> Token:
    elided = _ELISION.match(word)
    return (start + elided.end(), end, word[elided.end() :]) if elided else (start, end, word)


def _runs(text: str) -> list[list[Token]]:
    """Runs of capitalised words on one line with nothing but spaces between them, each allowed one
    lower-case particle between two capitalised words."""
    tokens = [_without_elision(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]

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
    preposition = _PLACE_PREPOSITIONS.get(language)
    places = {m.group(1) for m in preposition.finditer(text)} if preposition else set()
    acronyms = _acronyms_in_sentences(text, language)
    recognised = Recognised.of(text, language)
    for words in _runs(text):
        # A sentence's first word is capitalised by its place: it is part of a name only when the text
        # never writes it in lower case.
        if _starts_sentence(text, words[0][0]) and words[0][2].lower() in lowered:
            words = words[1:]
        words = _trim(words, stop)
        # Capitals right after a number belong to it: a postcode's letters ("3012 CN Rotterdam") or a
        # unit ("16 GB Zilver", a quantity, after which a word is an item's colour, not a name).
        if (
            len(words) > 1
            and words[0][2].isupper()
            and _NUMBER_BEFORE.search(text[max(0, words[0][0] - 12) : words[0][0]])
        ):
            if _QUANTITY.fullmatch(text[_NUMBER_START.search(text[: words[0][0]]).start() : words[0][1]]):
                continue
            words = words[1:]
        # A role or title written before a person's name, capitalised as every German noun is
        # ("Geschäftsführer Markus Oestreicher"), is not part of the name.
        for at in range(1, len(words) - 1):
            if is_first_name(words[at][2]) and not is_first_name(words[0][2]):
                words = words[at:]
                break
        capitalised = [w for _, _, w in words if _capitalised(w)]
        # Two capitalised words at least, one of them more than an acronym ("PDF MD" is no name); or
        # one, inside a sentence where the language writes its nouns in lower case (see _single_name),
        # an acronym of running text, or anywhere a name the rules know by itself (a country's, or a
        # company's such as Nintendo on an invoice's line of its own).
        single = (
            len(words) == 1
            and words[0][2].lower() not in lowered
            and (
                _single_name(text, words[0], language)
                or words[0][2] in acronyms
                or _known_anywhere(words[0][2], language)
            )
        )
        if (
            (len(capitalised) < 2 and not single)
            or (all(w.isupper() for w in capitalised) and not single)
            or len(words) > MAX_NAME_WORDS
        ):
            continue
        start, end = words[0][0], words[-1][1]
        written = display_name(text[start:end])
        name = nominative(written, language)
        key = canonical_key(name, CONCEPT)
        kind = _name_type(name, key) if is_meaningful(name, key) else None
        if kind is None:
            continue
        if kind == CONCEPT:
            kind = _place_or_recognised(name, written, len(words), (start, end), places, language, recognised)
        if kind != CONCEPT:
            key = canonical_key(name, kind)
        if names_a_page(key, kind):
            continue
        found.append(NeutralFound(key, name, kind, start, end))
    return _family_names(text, found, lowered, language)


# The types a language's entity recogniser gives (WikiNER's labels); MISC (works, events, nationalities,
# products alike) settles nothing.
_RECOGNISED_TYPES = {"PER": PERSON, "LOC": LOCATION, "ORG": ORGANIZATION}


class Recognised:
    """The entities a language's own recogniser (graph.extraction.pipeline.language_ner) finds in a
    text: a name the rules leave a concept takes the type of the entity written over it, so that
    "Molière" is a person and "Paris" a place in French as they are in English. The rules still find
    the names and settle every type they can: the recogniser only types what they cannot, and runs
    (and loads) only when a text has such a name."""

    def __init__(self, text: str, language: str):
        self.text, self.language = text, language

    @classmethod
    def of(cls, text: str, language: str) -> Recognised | None:
        from graph.extraction.pipeline import LANGUAGE_MODELS  # spaCy loads only when a name needs it

        return cls(text, language) if language in LANGUAGE_MODELS else None

    @cached_property
    def spans(self) -> list[tuple[int, int, str]]:
        from graph.extraction.pipeline import language_ner

        nlp = language_ner(self.language)
        if nlp is None:
            return []
        return [
            (ent.start_char, ent.end_char, _RECOGNISED_TYPES[ent.label_])
            for ent in nlp(self.text).ents
            if ent.label_ in _RECOGNISED_TYPES
        ]

    def type_of(self, start: int, end: int, name: str) -> str | None:
        """The type of the recognised entity written over text[start:end] (the name), if one is. A name
        with a word in capitals takes no person's or place's type from it: an acronym names an
        organisation or a thing ("RCS Paris", the Paris trade register, is no place). A person of
        several words needs a given name first: "Facture Free", a title, is no one."""
        words = name.split()
        acronym = any(len(w) > 1 and w.isupper() and not _ROMAN.fullmatch(w) for w in words)
        for s, e, kind in self.spans:
            if s <= start and end <= e:
                if kind == PERSON and len(words) > 1 and not is_first_name(re.split("[-‐]", words[0])[0]):
                    return None  # "Jean-Baptiste Poquelin" opens with Jean
                return kind if kind == ORGANIZATION or not acronym else None
        return None


def _place_or_recognised(
    name: str,
    written: str,
    words: int,
    span: tuple[int, int],
    places: set[str],
    language: str,
    recognised: Recognised | None,
) -> str:
    """The type of a name its own words leave a concept: a place for one word written after a place's
    preposition (not an acronym), a territory, or a place the language's inflection tables know;
    else the type the language's recogniser gives it, if it has one."""
    if words == 1 and (
        (written in places and not name.isupper()) or _is_territory(name, language) or names_a_place(name, language)
    ):
        return LOCATION
    return (recognised.type_of(*span, name) if recognised is not None else None) or CONCEPT


def _starts_sentence(text: str, start: int) -> bool:
    """Whether a sentence starts at `start`: the text's start, or after a sentence's end or a line
    break (the text before it read back a little way only, so a long text costs no more per word)."""
    return bool(_SENTENCE_END.search(text[max(0, start - 80) : start]))


def _family_names(text: str, found: list[NeutralFound], lowered: set[str], language: str) -> list[NeutralFound]:
    """A family name alone ("Moreno", "Fichtner") is the person the same text names in full ("Juan
    Moreno", "Ullrich Fichtner"), in German too, where a lone capitalised word is otherwise no name.
    A family name two people of the text share stays unresolved, and so does one the text also
    writes in lower case ("Fischer" beside "der fischer" would be a word)."""
    people: dict[str, set[str]] = {}
    for item in found:
        parts = item.name.split()
        if item.type == PERSON and len(parts) > 1 and len(parts[-1]) >= 3 and parts[-1].lower() not in lowered:
            people.setdefault(parts[-1], set()).add(item.key)
    family = {name: next(iter(keys)) for name, keys in people.items() if len(keys) == 1}
    if not family:
        return found
    resolved = [
        NeutralFound(family[item.name], item.name, PERSON, item.start, item.end) if item.name in family else item
        for item in found
    ]
    taken = sorted((item.start, item.end) for item in resolved)
    starts = [span[0] for span in taken]
    for match in _WORD.finditer(text):
        start, end, value = _without_elision(match.start(), match.end(), match.group())
        if value[:1].isupper() and language in DECLINED:
            value = nominative(value, language)  # "Эйнштейна" is Эйнштейн's
        if value not in family:
            continue
        before = bisect_right(starts, start) - 1  # the last name found that starts at or before it
        if before < 0 or taken[before][1] <= start:
            resolved.append(NeutralFound(family[value], value, PERSON, start, end))
    return sorted(resolved, key=lambda item: item.start)


def _single_name(text: str, word: Token, language: str) -> bool:
    """One capitalised word is a name ("Villeurbanne", "Molière", "Кострома") in a language that writes
    its common nouns in lower case (not German), inside a sentence: after a word,
    a comma or an elided article on the same line, never first in a sentence, a line or a table's
    cell, where capitals mark the place, not a name. Words in capitals are acronyms, which
    _acronyms_in_sentences judges."""
    start, _, value = word
    if not _may_be_one_word_name(value, language) or language in _NOUNS_CAPITALISED:
        return False  # German capitalises every noun (its known names: _known_anywhere)
    if _QUANTITY_BEFORE.search(text[max(0, start - 12) : start]):
        return False  # an invoice's "1 x Controller": an item, not a name
    before = text[max(0, start - 3) : start]
    return bool(_MID_SENTENCE.search(before) or _ELIDED.search(before))


_QUANTITY_BEFORE = re.compile(r"\d\s*[x×] $")
_NUMBER_BEFORE = re.compile(r"\d[ \t]$")
_NUMBER_START = re.compile(r"\d+(?:[.,]\d+)?[ \t]$")


def _known_anywhere(word: str, language: str) -> bool:
    """Whether one word is a name wherever it stands, first in a line or a cell too: a country's or
    region's name in the text's language, or a name the gazetteers know (see _known_name)."""
    return _may_be_one_word_name(word, language) and (_is_territory(word, language) or _known_name(word))


def _may_be_one_word_name(word: str, language: str) -> bool:
    """One word of three letters or more, not in capitals (an acronym: _acronyms_in_sentences), in a
    language whose script has capitals."""
    return (
        bool(language)
        and language not in _UNCASED
        and not word.isupper()
        and len(word) >= 3
        and not is_adjective(word, language)  # "в Высшее (училище)": an adjective names nothing alone
    )


@lru_cache(maxsize=8192)
def _known_name(word: str) -> bool:
    """Whether one word is a name the rules know in any language: an organisation's or a technology's
    (Google, Dropbox, Python), from the gazetteers the English rules use."""
    return type_for_name(word, canonical_key(word, CONCEPT), CONCEPT) not in (None, CONCEPT)


def _acronyms_in_sentences(text: str, language: str) -> set[str]:
    """The acronyms that are names ("la CNIL", "des BGH", "l’OTAN", "в СССР") in a cased language,
    German too: those that stand in running text twice or more, in most of their mentions (see
    _in_running_text); once is too little to tell a name from the abbreviation in a form's footer ("N°
    de TVA intra-communautaire"). A bill's labels stand between numbers and other labels ("Montant
    TVA 5,00", "29,99 € TTC") and stay out, as do currency codes and roman numerals."""
    if not language or language in _UNCASED:
        return set()
    stop = _stopwords(language)
    mentions: dict[str, list[bool]] = {}
    for match in _WORD.finditer(text):
        start, end, value = _without_elision(match.start(), match.end(), match.group())
        if value.isupper() and 2 <= len(value) <= 6 and not _ROMAN.fullmatch(value):
            mentions.setdefault(value, []).append(_in_running_text(text, start, end, stop))
    currencies = _currency_codes()
    return {
        value
        for value, in_text in mentions.items()
        if value not in currencies and sum(in_text) >= 2 and 2 * sum(in_text) > len(in_text)
    }


def _in_running_text(text: str, start: int, end: int, stop: frozenset[str]) -> bool:
    """A word in lower case, a stop-word ("La CNIL") or an elided article before the span on the same
    line, and a word in lower case or a sentence's punctuation after it."""
    before = text[max(0, start - 40) : start]
    after = text[end : end + 2]
    previous = _WORD_BEFORE.search(before)
    previous_word = previous.group().rstrip() if previous else ""
    if not (_ELIDED.search(before) or previous_word.islower() or previous_word.lower() in stop):
        return False
    return bool(after) and (after[0] in ",.;:)!?»”" or (after[0] == " " and after[1:].islower()))


_ELIDED = re.compile(r"(?<![^\W\d_])[^\W\d_A-ZÀ-ÞА-ЯЁ]{1,5}[’']$")
_WORD_BEFORE = re.compile(r"(?<![^\W\d_])[^\W\d_]+ $")


@lru_cache(maxsize=1)
def _currency_codes() -> frozenset[str]:
    from babel.numbers import list_currencies

    return frozenset(list_currencies())


# Prepositions that put a single name in a place, by language ("en France", "au Népal", "en Argentina",
# "in Olanda", "в Мюнхене", "из Милана"): only those that take places and seldom people.
_PLACE_PREPOSITIONS = {
    language: re.compile(rf"(?<![^\W\d_])(?:{words}) ([^\W\d_][^\W\d_]+)(?![^\W\d_])", re.IGNORECASE)
    for language, words in {
        "fr": "en|au|aux",
        "es": "en",
        "ca": "en",
        "it": "in",
        "pt": "em",
        "nl": "in",
        "ru": "в|во|из",
        "uk": "в|у|з|із",
        "pl": "w|we",
    }.items()
}
# Languages that decline a name: "России" is Россия, "Европе" Европа.
_DECLINING = frozenset("ru uk be pl cs sk sl hr sr bg lt lv".split())


@lru_cache(maxsize=16)
def _territories(language: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names of countries and regions in `language` (Unicode CLDR, through babel), and the stems
    of those names for a language that declines them."""
    from babel import Locale, UnknownLocaleError

    try:
        names = frozenset(Locale.parse(language).territories.values())
    except (UnknownLocaleError, ValueError):
        return frozenset(), frozenset()
    stems = frozenset(name[:-1] for name in names if len(name) >= 5 and " " not in name)
    return names, stems if language in _DECLINING else frozenset()


def _is_territory(name: str, language: str) -> bool:
    """Whether one word names a country or region in `language`, declined or not."""
    if not language:
        return False
    names, stems = _territories(language)
    return name in names or any(name[:cut] in stems for cut in (-1, -2) if len(name) + cut >= 4)


def _in_japanese_sentence(text: str, start: int, end: int) -> bool:
    """Whether the nearest character before or after the span (spaces aside) is Japanese: a Latin
    word in a German or French sentence of a mixed chunk is no name for being there."""
    before = text[max(0, start - 4) : start].rstrip(" \u3000")
    after = text[end : end + 4].lstrip(" \u3000")
    return bool(
        (before and _JAPANESE_NEIGHBOUR.fullmatch(before[-1])) or (after and _JAPANESE_NEIGHBOUR.fullmatch(after[0]))
    )


def _latin_word_is_english(word: str) -> bool:
    """A capitalised English word or stop-word ("Exception", "The"), or one in capitals that is a
    word of four letters or more ("FLOOR"), rather than a name or an acronym."""
    lowered = word.lower()
    if lowered in _stopwords("en"):
        return True
    return lowered in english_words() and (not word.isupper() or len(word) >= 4)


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
        found += [NeutralFound(*item) for item in japanese_names(text)]
        taken = [(item.start, item.end) for item in found]
        for match in _LATIN_WORD.finditer(text):
            name, start, end = match.group(), match.start(), match.end()
            if (
                not _in_japanese_sentence(text, start, end)
                or _latin_word_is_english(name)
                or any(s < end and start < e for s, e in taken)
            ):
                continue
            kind = type_for_name(name, canonical_key(name, CONCEPT), CONCEPT) or CONCEPT
            key = canonical_key(name, kind)
            if is_meaningful(name, key) and not names_a_page(key, kind):
                found.append(NeutralFound(key, name, kind, start, end))
    for match in _QUANTITY.finditer(text):
        name = " ".join(match.group().split())
        found.append(NeutralFound(name.lower(), name, CONCEPT, match.start(), match.end()))
    found.sort(key=lambda item: item.start)
    return found[:MAX_MENTIONS]
