"""Names and keys: the surface form an entity is shown by, the key that makes its variants one
entity, and whether a name is worth a node at all."""

from __future__ import annotations

import re
import unicodedata

from graph.vocabulary import (
    CASE_SENSITIVE_ALIASES,
    CONCEPT,
    GENERIC_NOUNS,
    NOT_ENTITIES,
    PERSON_TITLES,
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


def _keep_char(ch: str) -> bool:
    return ch in _NAME_SYMBOLS or unicodedata.category(ch)[0] in "LNZ"


def display_name(name: str) -> str:
    """The surface form as shown: whitespace collapsed, edge punctuation, possessives, articles and
    symbols (emoji) gone."""
    name = unicodedata.normalize("NFKC", clean_text(name)).replace("’", "'")
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
    return key not in GENERIC_NOUNS and key not in NOT_ENTITIES


# camelCase inside a word, snake_case, a call, a path or a dotted name: written by and for code.
_IDENTIFIER = re.compile(r"[a-z][A-Z]|_|\(\)|::|/|\w\.\w")


def looks_like_code(name: str) -> bool:
    return bool(_IDENTIFIER.search(name))
