"""Names and keys: the surface form an entity is shown by, the key that makes its variants one
entity, and whether a name is worth a node at all."""

from __future__ import annotations

import re
import unicodedata

from graph.vocabulary import (
    CASE_SENSITIVE_ALIASES,
    CONCEPT,
    GENERIC_NOUNS,
    LOCATION,
    NOT_ENTITIES,
    NUMBER_WORDS,
    ORGANIZATION,
    PAGE_WORDS,
    PERSON,
    PERSON_TITLES,
    PLACE_ALIASES,
    STRUCTURE_WORDS,
    TECH_ALIASES,
    TECH_PHRASES,
    TECH_TERMS,
    TECHNOLOGY,
)

MAX_NAME_CHARS = 80

_ORG_SUFFIXES = {
    "corp",
    "corporation",
    "inc",
    "incorporated",
    "ltd",
    "limited",
    "llc",
    "plc",
    "co",
    "gmbh",
    "company",
    "ag",
    "sa",
    "bv",
    "llp",
    "lp",
}
_ARTICLES = ("the ", "a ", "an ")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")
_NAME_SYMBOLS = set("-'&.+#/_,")
_EDGE_PUNCT = " \t\n.,;:!?\"'`()[]{}<>«»“”‘’*_-–—/\\|#~"


def clean_text(text: str) -> str:
    """Control and zero-width characters become spaces, so offsets into the original text still hold."""
    return _CONTROL.sub(" ", text)


def singular(word: str) -> str:
    """The word without a simple English plural ending ("batteries" -> "battery"); short words stay."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os", "as")):
        return word[:-1]
    return word


# A word broken at a line end by a hyphen, whose line break became a space: "Trace- Monkey",
# "inter- preter". Not "pre- and post-war", where the hyphen stands for a word that follows.
_BROKEN_WORD = re.compile(r"(?<=[^\W\d_])-\s+(?=[^\W\d_])(?!(?:and|or|und|oder|et|ou|y|o|и|или)\b)")


def join_broken_words(text: str) -> str:
    """A name broken across a line by a hyphen made one word again ("Trace- Monkey" -> "TraceMonkey")."""
    return _BROKEN_WORD.sub("", text) if "-" in text else text


def _keep_char(ch: str) -> bool:
    return ch in _NAME_SYMBOLS or unicodedata.category(ch)[0] in "LNZ"


def display_name(name: str) -> str:
    """The surface form as shown: whitespace collapsed, edge punctuation, possessives, articles and
    symbols (emoji) gone."""
    name = join_broken_words(unicodedata.normalize("NFKC", clean_text(name)).replace("’", "'"))
    name = "".join(ch if _keep_char(ch) else " " for ch in name)
    name = " ".join(name.split()).strip(_EDGE_PUNCT)
    name = re.sub(r"'s?$", "", name).strip(_EDGE_PUNCT)
    lowered = name.lower()
    for article in _ARTICLES:
        if lowered.startswith(article):
            name = name[len(article) :]
            break
    return name.strip(_EDGE_PUNCT)


# Known technologies, by key; one is never singularised ("Kubernetes") nor typed otherwise.
GAZETTEER = frozenset(term.strip() for term in [*TECH_TERMS, *TECH_PHRASES, *TECH_ALIASES.values()] if term.strip())


def canonical_key(name: str, entity_type: str | None = None) -> str:
    """The key that makes surface variants one entity: case, whitespace, possessives, leading articles,
    company suffixes ("Acme Corp." = "ACME CORP" = "Acme") and, for concepts and technologies, simple
    plurals ("APIs" = "API")."""
    shown = re.sub(r"[.,]", " ", display_name(name)).split()
    words = [word.casefold() for word in shown]
    while len(words) > 1 and words[-1] in _ORG_SUFFIXES:
        words.pop()
    while len(words) > 1 and words[0] in PERSON_TITLES:  # "Dr. Patel" is Patel
        words.pop(0)
        shown.pop(0)
    whole = " ".join(words)
    if whole in TECH_ALIASES and (
        whole not in CASE_SENSITIVE_ALIASES or " ".join(shown) == CASE_SENSITIVE_ALIASES[whole]
    ):
        return TECH_ALIASES[whole]
    if whole in PLACE_ALIASES and entity_type in (LOCATION, ORGANIZATION, None) and not name.islower():
        return PLACE_ALIASES[whole]  # "US", "U.S.", "USA": the United States ("us" is a pronoun)
    if whole in GAZETTEER:  # "Kubernetes" stays; "neural networks" is "neural network"
        singular_key = " ".join([*words[:-1], singular(words[-1])])
        return singular_key if singular_key in GAZETTEER else whole
    if entity_type in (CONCEPT, TECHNOLOGY) and words:
        last = shown[len(words) - 1]
        # "APIs", "GPUs": an acronym's plural is its letters plus a lowercase s.
        words[-1] = last[:-1].casefold() if re.fullmatch(r"[A-Z]{2,}s", last) else singular(words[-1])
        whole = " ".join(words)
        if whole in TECH_ALIASES and whole not in CASE_SENSITIVE_ALIASES:
            return TECH_ALIASES[whole]
    return " ".join(words)[:200]


def is_meaningful(name: str, key: str) -> bool:
    if not key or len(name) > MAX_NAME_CHARS or len(key) < 2:
        return False
    letters = sum(ch.isalpha() for ch in key)
    if letters < 2 or letters < len(key.replace(" ", "")) / 2:
        return False
    return key not in GENERIC_NOUNS and key not in NOT_ENTITIES and not is_document_structure(key)


# Roman numerals: section and page numbers ("ii", "Part IV"). Those written with L, C, D or M alone
# are also abbreviations ("DC", "MD", "CD"), so only I, V and X make one by themselves.
_ROMAN = re.compile(r"(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})")
_ROMAN_ANY = re.compile(r"(?=[mdclxvi])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})")
# A number or a letter after a structure word: "Table 2", "Figure 3b", "Appendix B", "Section 4.1".
_NUMBERING = re.compile(r"[\d.]+[a-z]?|[a-z]|\d+[-–]\d+")


def is_roman_numeral(word: str) -> bool:
    return bool(word) and bool(_ROMAN.fullmatch(word.casefold()))


def is_document_structure(key: str) -> bool:
    """A key that names a part of a document, not a thing: a structure word alone or numbered
    ("Figure", "Table 2", "Abstract", "Vol", "pp", "Section IV"), a roman numeral, a file format or a
    degree after a name ("MD", "PhD"). Keys are lower case."""
    words = key.split()
    if not words or key in GAZETTEER:
        return False  # "LLM", "CSV": a technology that shares its letters with a degree or format
    if all(is_roman_numeral(word) or word in STRUCTURE_WORDS or word in _MINOR for word in words):
        return words[0] not in _MINOR
    return words[0] in STRUCTURE_WORDS and all(
        _NUMBERING.fullmatch(word) or _ROMAN_ANY.fullmatch(word) or word in STRUCTURE_WORDS or word in _MINOR
        for word in words[1:]
    )


_MINOR = frozenset("of and the in for to a".split())


def names_a_page(key: str, entity_type: str) -> bool:
    """A name of two words or more ending in a word for a page ("Account Activity Page", "Rechnung
    Seite") names a page of a document or a site, and one ending in "No" or "Nr" a field's label
    ("Invoice No", "Rechnung Nr"), not a thing; a person's surname is neither ("Larry Page"). Keys
    are lower case."""
    words = key.split()
    return entity_type != PERSON and len(words) >= 2 and (words[-1] in PAGE_WORDS or words[-1] in NUMBER_WORDS)


# camelCase inside a word, snake_case, a call, a path or a dotted name: written by and for code.
_IDENTIFIER = re.compile(r"[a-z][A-Z]|_|\(\)|::|/|\w\.\w")


def looks_like_code(name: str) -> bool:
    return bool(_IDENTIFIER.search(name))
