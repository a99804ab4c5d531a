"""What a name and the words around it say about the kind of thing it names: a person's given or
family name, a person's title, a role in apposition, or a seller or service ("ordered from X"). Pure: spaCy tokens in, types out;
the extractor (graph.entities) asks it when the statistical model's label is weak or missing."""

from __future__ import annotations

import functools
from pathlib import Path

from graph.extraction.keys import canonical_key
from graph.vocabulary import PERSON_TITLES

FIRST_NAMES_FILE = Path(__file__).resolve().parent / "data" / "first_names.txt"
FAMILY_NAMES_FILE = Path(__file__).resolve().parent / "data" / "family_names.txt"
ORGANIZATIONS_FILE = Path(__file__).resolve().parent / "data" / "organizations.txt"


@functools.cache
def first_names() -> frozenset[str]:
    """Given names of many languages (graph/extraction/data/first_names.txt), lower case."""
    return _read_names(FIRST_NAMES_FILE)


@functools.cache
def family_names() -> frozenset[str]:
    """Family names of many languages (graph/extraction/data/family_names.txt), lower case."""
    return _read_names(FAMILY_NAMES_FILE)


def organization_names() -> list[str]:
    """Well-known organisations as they are written (graph/extraction/data/organizations.txt)."""
    return _entries(ORGANIZATIONS_FILE)


@functools.cache
def organization_keys() -> frozenset[str]:
    """The keys of well-known organisations (graph/extraction/data/organizations.txt): the same keys
    the extractor files names under."""
    names = organization_names()
    # Under the key of an organisation and of a concept (a noun chunk's key: "Barclays" -> "barclay").
    return frozenset(canonical_key(name, kind) for name in names for kind in ("organization", "concept"))


def is_first_name(word: str) -> bool:
    return word.casefold() in first_names()


def is_family_name(word: str) -> bool:
    return word.casefold() in family_names()


def _entries(path: Path) -> list[str]:
    """A data file's entries: one per line, blank lines and # comments left out."""
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _read_names(path: Path) -> frozenset[str]:
    return frozenset(entry.casefold() for entry in _entries(path))


def titled(span) -> bool:
    """A person's title just before the name ("Dr Tomasz Kowal", "Employment Judge Harcourt",
    "Sister Aisha Rahman") or opening it."""
    doc = span.doc
    before = doc[span.start - 1] if span.start > 0 else None
    if before is not None and before.text[:1].isupper() and _is_title(before.lower_):
        return True
    return len(span) > 1 and span[0].text[:1].isupper() and _is_title(span[0].lower_)


def _is_title(word: str) -> bool:
    return word in PERSON_TITLES or word.rstrip(".") in PERSON_TITLES


def looks_like_full_name(tokens) -> bool:
    """Two or three capitalised words, none an acronym, the first a known given name ("Ingrid
    Halvorsen", "Gwen Tallis"): a person, whatever the model said, unless a head word ("Coaches",
    "Marshes") said otherwise first."""
    words = [t for t in tokens if t.is_alpha or "'" in t.text or "-" in t.text[1:-1]]
    if not 2 <= len(words) <= 3 or len(words) != len(tokens):
        return False
    if not all(t.text[:1].isupper() and not t.is_upper for t in words):
        return False
    return is_first_name(words[0].text)


# Verbs and nouns of buying, booking and hiring: what comes "from" or "through" after them is a
# seller or a service, an organisation ("ordered seeds from Real Seeds", "booked through NHS
# Professionals", "bought a brood box from Thornes").
_TRADE_VERBS = frozenset(
    "order buy purchase get book hire rent source collect pick borrow lease reserve stock supply".split()
)
_TRADE_PREPOSITIONS = frozenset(["from", "through", "via"])


def sold_by(span) -> bool:
    """True when the name is where something was bought, booked or hired from."""
    root = span.root
    prep = root.head
    if root.dep_ != "pobj" or prep.lower_ not in _TRADE_PREPOSITIONS:
        return False
    head = prep.head
    for _ in range(3):  # "ordered [more nitrile gloves] from X": the preposition may hang on the object
        if head.pos_ in ("VERB", "AUX") or head.dep_ == "ROOT":
            return head.lemma_.lower() in _TRADE_VERBS or head.lower_ in _TRADE_VERBS or _trade_form(head.lower_)
        if head.head is head:
            break
        head = head.head
    return False


def _trade_form(word: str) -> bool:
    """An inflected trade verb when the lemmatizer did not run ("ordered", "booked", "bought")."""
    irregular = {"bought": "buy", "got": "get", "picked": "pick", "sourced": "source"}
    if word in irregular:
        return True
    return any(word.endswith(suffix) and word[: -len(suffix)] in _TRADE_VERBS for suffix in ("ed", "d", "ing", "s"))


# Nouns that say what the name beside them is, in apposition: "the supplier, Kitlocker", "Gary
# Whitlock, the promoter", "our accountant, Daniel Okoro".
ORGANIZATION_ROLES = frozenset(
    """
supplier suppliers vendor retailer shop store firm company business brand manufacturer maker insurer
bank lender landlord agency contractor provider charity club school hospital practice garage chain
""".split()
)
PERSON_ROLES = frozenset(
    """
treasurer secretary chair chairman chairwoman conductor coach manager director accountant lawyer
solicitor barrister counsel doctor nurse surgeon dentist teacher tutor head headteacher principal
teammate colleague friend neighbour neighbor partner wife husband mother father sister brother son
daughter aunt uncle cousin grandmother grandfather landlady tenant tiler plumber electrician builder
mechanic driver promoter agent recruiter engineer developer designer editor author writer singer
drummer guitarist bassist producer photographer registrar consultant physio physiotherapist
therapist vet mentor intern boss founder ceo cto cfo owner client customer claimant respondent
""".split()
)
_ROLE_TYPES = {**dict.fromkeys(ORGANIZATION_ROLES, "organization"), **dict.fromkeys(PERSON_ROLES, "person")}


def role_in_apposition(span) -> str | None:
    """The type a role noun in apposition gives the name ("the supplier, Kitlocker"), or None."""
    root = span.root
    if root.dep_ == "appos" and root.head.pos_ == "NOUN":
        return _ROLE_TYPES.get(root.head.lower_)
    for child in root.children:
        if child.dep_ == "appos" and child.pos_ == "NOUN" and not child.text[:1].isupper():
            return _ROLE_TYPES.get(child.lower_)
    return None
