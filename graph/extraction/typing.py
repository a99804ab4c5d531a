"""An entity's type: what the name and the words around it say about the kind of thing it names (a
given or family name, a title, a role in apposition, a seller or service: "ordered from X"), and
the corrections a reader would make to the statistical model's label. Pure: spaCy tokens in, types out."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from core.language import calendar_words
from graph.extraction.context import kind_from_context
from graph.extraction.keys import (
    GAZETTEER,
    canonical_key,
    is_document_structure,
    is_roman_numeral,
    looks_like_code,
    singular,
)
from graph.extraction.lexicon import english_words, lemma_of, words_of
from graph.vocabulary import (
    AMBIGUOUS_TECH_TERMS,
    CONCEPT,
    EVENT,
    EVENT_HEADS,
    GENERIC_NOUNS,
    GROUP,
    IDEA_HEADS,
    LAW_HEADS,
    LAW_OPENINGS,
    LOCATION,
    NOT_ENTITIES,
    ORG_NAME_HEADS,
    ORGANIZATION,
    PERSON,
    PERSON_TITLES,
    PLACE_ALIASES,
    PLACE_HEADS,
    PRODUCT,
    TECHNOLOGY,
    WORK,
)

# A company's legal form, written after its name in many countries ("LoogBerry GmbH", "Free SAS").
LEGAL_FORMS = frozenset(
    "gmbh ag ug kg ohg kgaa se sas sa sarl sàrl sl spa srl ltd limited inc llc llp plc bv nv oy ab asa "
    "aps eg ооо оао зао пао".split()
)
# The legal forms that settle a name as a company whatever its shape or what a model said of it: not
# those that are also words of products and places ("iPhone SE", "Day Spa", "Limited Edition").
COMPANY_FORMS = LEGAL_FORMS - frozenset("se sa spa limited ab eg oy sl".split())
# Cyrillic letters as Latin ones, so that a given name written in Russian, Ukrainian or Bulgarian is
# found in the list of given names ("Альберт" is "Albert", "Мария" is "Mariya", close to "Maria").
_CYRILLIC = dict(
    zip(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ",
        "a b v g d e e zh z i i k l m n o p r s t u f kh ts ch sh shch  y  e yu ya i i ie g".split(" "),
        strict=True,
    )
)


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
    """A known given name, in Latin letters or in Cyrillic ones read as Latin ("Альберт")."""
    folded = word.casefold()
    if folded in first_names():
        return True
    if any(ch in _CYRILLIC for ch in folded):
        latin = "".join(_CYRILLIC.get(ch, ch) for ch in folded)
        return latin in first_names() or latin.removesuffix("iya") + "ia" in first_names()
    return False


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
    "Sister Aisha Rahman") or opening it. A title that is also a common word ("Rev", "Judge",
    "Coach") counts only before a name-like word: "Rev Environ Contam" is a journal's abbreviation."""
    doc = span.doc
    before = doc[span.start - 1] if span.start > 0 else None
    if before is not None and before.text[:1].isupper() and _is_title(before.lower_):
        return _title_before_name(before, span[0])
    if len(span) > 1 and span[0].text[:1].isupper() and _is_title(span[0].lower_):
        return _title_before_name(span[0], span[1])
    return False


def _is_title(word: str) -> bool:
    return word in PERSON_TITLES or word.rstrip(".") in PERSON_TITLES


# Titles that are also everyday words ("a rev counter", "the coach", "Sister Act"): a name must follow.
_WORD_TITLES = frozenset(
    "rev sister nurse judge justice coach uncle aunt auntie lady lord captain capt sergeant sgt".split()
)


def _title_before_name(title, word) -> bool:
    """Whether the word after a title is a name: any word after an unambiguous title or one written
    with its period ("Dr", "Mrs", "Rev."); after a word title, a known given or family name or a
    capitalised word that is no English verb or adjective ("Judge Fairbanks", but not "Rev Environ")."""
    doc = title.doc
    if not title.whitespace_:
        return False  # "Dr.Amt Cr.Amt": a column's abbreviation, not a title
    period = title.text.endswith(".") or (title.i + 1 < len(doc) and doc[title.i + 1].text == ".")
    if title.lower_.rstrip(".") not in _WORD_TITLES or period:
        return True
    text = word.text
    if not text[:1].isupper() or text.isupper():
        return False
    if is_first_name(text) or is_family_name(text):
        return True
    # The word tables list many surnames as nouns ("Fairbanks"); a verb or an adjective is no name.
    return not any(word.lower_ in words_of(pos) for pos in ("verb", "adj", "adv"))


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
# Nouns that say the name is a book, a film, a record or a show: "Project Hail Mary, the new Andy Weir
# novel", "the podcast, Hard Fork".
WORK_ROLES = frozenset(
    "novel book memoir biography film movie documentary album song single record show series podcast play musical".split()
)
_ROLE_TYPES = {
    **dict.fromkeys(ORGANIZATION_ROLES, "organization"),
    **dict.fromkeys(PERSON_ROLES, "person"),
    **dict.fromkeys(WORK_ROLES, "work"),
}


def role_in_apposition(span) -> str | None:
    """The type a role noun in apposition gives the name ("the supplier, Kitlocker"), or None."""
    root = span.root
    if root.dep_ == "appos" and root.head.pos_ == "NOUN":
        return _ROLE_TYPES.get(root.head.lower_)
    for child in root.children:
        if child.dep_ == "appos" and child.pos_ == "NOUN" and not child.text[:1].isupper():
            return _ROLE_TYPES.get(child.lower_)
    return None


# --- Types a person agrees with ------------------------------------------------------------------
#
# The statistical model types a capitalised word it does not know as a person or an organisation
# ("Autovacuum", "Meeting", "Grinder Burr", "CrashLoopBackOff", "EUR"). The rules below keep what it
# gets right and correct what a reader would: known technologies are technologies whatever the model
# says, and a name is a person only if it can be one.


_NAME_PARTICLES = frozenset(
    ["van", "von", "de", "der", "den", "da", "di", "du", "le", "la", "del", "della", "bin", "al", "el", "ter"]
)


def is_foreign(doc) -> bool:
    """True when a text is not English: English puts function words ("the", "is", "of") among its
    lower-case words, another language barely any. Names are foreign in any language, so only the
    lower-case words tell, each counted once, and fewer than four give no evidence. Computed once
    per text."""
    foreign = doc.user_data.get("foreign")
    if foreign is None:
        words = {t.lower_: t.is_stop for t in doc if t.is_alpha and t.is_lower}
        foreign = len(words) >= 4 and sum(words.values()) / len(words) < 0.15
        doc.user_data["foreign"] = foreign
    return foreign


def _could_be_person(span, lowercase_words: set[str]) -> bool:
    """A name can be a person's unless it is an acronym, code, a currency or date word, a word the
    same text also writes in lower case ("Grinder Burr" beside "the grinder burrs"), or a lone word
    that opens a sentence or is an English verb or adjective ("Cook", "Monetise"). A title before it
    ("Dr. Patel") settles it."""
    tokens = _name_tokens(span)
    if not tokens:
        return False
    doc = span.doc
    if titled(span):
        return True
    if len(tokens) > 4 or len({t.lower_ for t in tokens}) < len(tokens):
        return False  # "Alice Alice Alice": a repeated word is no name
    if is_foreign(doc):
        return False  # the model knows English names; in another language its guesses are noise
    if any(_not_a_name_word(token) for token in tokens):
        return False
    last = tokens[-1].lower_
    if last in lowercase_words or singular(last) in lowercase_words:
        return False
    if len(tokens) == 1:
        word = tokens[0]
        # A known given name that is no English word ("Megan", "Bernadette") needs no further proof,
        # nor one that is ("Sam", "Rosa") where no sentence's start explains its capital.
        known = is_first_name(word.text) and (word.lower_ not in english_words() or not word.is_sent_start)
        return known or _lone_word_acts_as_person(word)
    return name_shaped(tokens) and not _common_words_only(tokens)


def name_shaped(tokens) -> bool:
    """A first-and-last shape: every word a name's word (not "Cr" or "Amt", with no vowel or too short
    to be one, but for an initial "R."), none but the first an English word that is no known name
    ("Anjali Kausar Unrepresented", "Drawing Robots Patrick Tresset" are not), and not opened by a
    place's prefix ("San Ramon", "Santa Ana", "Fort Worth")."""
    if tokens[0].lower_ in PLACE_PREFIXES:
        return False
    vocabulary = english_words()
    for position, token in enumerate(tokens):
        text = token.text
        if len(text.rstrip(".")) == 1 and text[:1].isupper():
            if position == len(tokens) - 1 and not text.endswith("."):
                return False  # "Tim O": a name cut short, not an initial
            continue
        if len(text) < 3 and not is_first_name(text) and not is_family_name(text):
            return False
        if not any(ch in _VOWELS for ch in token.lower_):
            return False
        # The word tables' short entries are as often names as words ("Wei", "Lee", "Kim").
        english = len(text) > 3 and (token.lower_ in vocabulary or singular(token.lower_) in vocabulary)
        if position and english and not (is_first_name(text) or is_family_name(text)):
            return False
    return True


_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿāăąēĕėęěīįıōŏőœūůűų")
# The first word of a place's name in the languages whose places the model most often takes for people.
PLACE_PREFIXES = frozenset("san santa santo são sao saint st ste los las fort mount mt port lake".split())


def _common_words_only(tokens) -> bool:
    """A name made only of English words, none of them a known given or family name where a name
    would have it, names a thing: "Curlew Sandpiper", "Candlelight Carol" (but "Kate Bush", "Chen Wei")."""
    first, last = tokens[0].text, tokens[-1].text
    if is_first_name(first) or is_family_name(first) or is_family_name(last):
        return False
    vocabulary = english_words()
    return all(t.lower_ in vocabulary or singular(t.lower_) in vocabulary for t in tokens)


def _name_tokens(span) -> list:
    """The words of a name: no possessive ("Chen Wei's"), no lone punctuation ("Sigma - Aldrich")."""
    return [
        t
        for t in span
        if t.is_alpha or (any(ch.isalpha() for ch in t.text) and t.lower_ not in ("'s", "’s") and len(t.text) > 2)
    ]


def _not_a_name_word(token) -> bool:
    """An acronym, code, a word that is never an entity or a generic noun, or a lower-case word that
    is no name particle ("van", "de")."""
    text = token.text
    return bool(
        (len(text) > 1 and text.isupper())
        or looks_like_code(text)
        or token.lower_ in NOT_ENTITIES
        or token.lower_ in GENERIC_NOUNS
        or not (text[:1].isupper() or token.lower_ in _NAME_PARTICLES)
    )


def _lone_word_acts_as_person(token) -> bool:
    """One capitalised word is a person's name only when it acts like one: someone who says, meets,
    writes or decides, someone met or asked, or someone's ("Alice's notes")."""
    if token.pos_ in ("VERB", "ADJ") or token.lower_ in words_of("verb") or token.lower_ in words_of("adj"):
        return False
    doc = token.doc
    if token.i > 0 and doc[token.i - 1].pos_ == "DET":
        return False  # "The Handbook does not present": a name takes no article
    after = doc[token.i + 1] if token.i + 1 < len(doc) else None
    if after is not None and after.lower_ in ("'s", "’s"):
        return True
    head = token.head
    if token.dep_ in ("nsubj", "nsubjpass") and lemma_of(head) in _HUMAN_VERBS:
        return True
    if token.dep_ in ("dobj", "dative") and lemma_of(head) in HUMAN_OBJECT_VERBS:
        return True
    return bool(
        token.dep_ == "pobj"
        and head.lower_ in ("with", "to", "by", "from")
        and lemma_of(head.head) in _HUMAN_VERBS | HUMAN_OBJECT_VERBS
    )


# The verbs of _HUMAN_VERBS and HUMAN_OBJECT_VERBS that only a person does or has done to them
# (below): not moving, living, visiting or seeing, which places are the objects of too.
_NOT_ONLY_PEOPLE = frozenset(
    "own run set update fix deploy clean roll page help start finish move arrive travel fly live sit stand "
    "visit see follow lead manage work book organise organize".split()
)


# What one has with someone: "lunch with Priya", "a call with Hiroshi".
_MEETING_NOUNS = frozenset(
    "lunch dinner breakfast brunch coffee drinks call meeting chat catchup catch-up sync date walk session".split()
)


def _acts_as_person(token) -> bool:
    """What overrules the model's organisation or place for a name a person can have: the name says,
    writes or decides something, is met, asked or called, is met with over a meal or a call ("lunch
    with Priya"), or is named beside such a name. Being moved to, visited or seen is no evidence
    ("moved to Santa Ana", "visit Florence")."""
    head = token.head
    if token.dep_ in ("nsubj", "nsubjpass") and lemma_of(head) in _HUMAN_VERBS:
        return True  # the one who does it: "Hiroshi moved the cluster"
    if token.dep_ in ("dobj", "dative") and lemma_of(head) in _PERSON_OBJECT_VERBS:
        return True
    if token.dep_ == "conj" and head.i < token.i:
        return _acts_as_person(head)  # "with Anjali and Hiroshi"
    if token.dep_ != "pobj" or head.lower_ != "with":
        return False
    return head.head.lower_ in _MEETING_NOUNS or lemma_of(head.head) in _SPEAKING_VERBS


# What people do in notes, as the subject of a verb ("Priya suggested"), and what is done to them
# ("met Priya", "ask Tom").
_HUMAN_VERBS = frozenset(
    """
say tell ask think want suggest agree disagree propose decide write mention email call meet join leave promise
explain argue believe feel know reply respond recommend complain thank review approve reject invite visit
marry lead manage hire interview teach learn prefer like love hate need plan work talk speak wonder remember
forget hope wish laugh smile cry sign send share present report note point confirm book organise organize
own run set update fix deploy clean roll page help start finish move arrive travel fly live sit stand
""".split()
)


HUMAN_OBJECT_VERBS = frozenset(
    """
meet ask tell call email page thank invite visit marry hire interview congratulate remind ping message text
cc contact introduce help see follow mentor
""".split()
)


_SPEAKING_VERBS = _HUMAN_VERBS - _NOT_ONLY_PEOPLE
_PERSON_OBJECT_VERBS = HUMAN_OBJECT_VERBS - _NOT_ONLY_PEOPLE


def type_for_name(name: str, key: str, entity_type: str) -> str | None:
    """The type the name alone settles, whatever the sentences said (None: not an entity at all):
    what the re-typing pass applies to entities already stored."""
    if _no_entity(name, key):
        return None
    words = name.split()
    if key in PLACE_ALIASES.values():
        return LOCATION  # "US", "UK" (the model often calls them organisations)
    if len(words) > 1 and words[-1].lower().replace(".", "") in COMPANY_FORMS:
        return ORGANIZATION  # "LoogBerry GmbH", "Coolblue B.V.": a company by its legal form, whatever its shape
    if key in GAZETTEER:
        return TECHNOLOGY
    if entity_type == TECHNOLOGY:
        return entity_type
    if key in organization_keys() and not name.islower():
        return ORGANIZATION
    if any(_EVENT_WORD.fullmatch(word) for word in words):
        return EVENT
    if _cited_by_initials(name):
        return PERSON  # "P. Marcel", "E. Pitoura", "J. R. Smith"
    if looks_like_code(name) and not (entity_type == PRODUCT and _BRAND.fullmatch(name)):
        return CONCEPT  # written by and for code; a product's name of joined words stays one ("an AeroPress")
    if len(words) > 1 and words[0][:1].isupper() and not (entity_type == PERSON and is_first_name(words[0])):
        by_head = _type_by_head(words)  # "Fiona Marsh" and "Jack Wood" are people, "Cley Marshes" a place
        if by_head is not None:
            return by_head
    return _person_corrected(words) if entity_type == PERSON else entity_type


def _no_entity(name: str, key: str) -> bool:
    """A name that is never an entity: a unit, currency or date word, a part of a document, a month or
    weekday in another language, or a legal form alone ("Limited", "GmbH": the end of a company's name)."""
    return (
        key in NOT_ENTITIES
        or is_document_structure(key)
        or _calendar_name(name)
        or (" " not in name and name.lower().strip(".") in LEGAL_FORMS)
    )


def _cited_by_initials(name: str) -> bool:
    """Initials and a name that is a known one or no English word: a person as papers cite them."""
    if not _INITIALLED.fullmatch(name):
        return False
    last = name.split()[-1]
    return is_family_name(last) or is_first_name(last) or last.lower() not in english_words()


def _calendar_name(name: str) -> bool:
    """A month's or a weekday's name in one of the languages CLDR's names are read in ("Dimanche",
    "Juillet", "Montag"), unless it is also a given name ("Julio", "Mai")."""
    return " " not in name and name.lower() in calendar_words() and not is_first_name(name)


def _type_by_head(words: list[str]) -> str | None:
    """The type a name's last word settles as the head of a place, event, organisation or law, or its
    first as the head of an idea ("Theory of Reasoned Action")."""
    head = words[-1].lower()
    if head in IDEA_HEADS or (len(words) > 2 and words[0].lower() in IDEA_HEADS and words[1] == "of"):
        return CONCEPT
    if head in EVENT_HEADS:
        return EVENT
    if head in PLACE_HEADS:
        return LOCATION
    if head in ORG_NAME_HEADS:
        return ORGANIZATION
    if head in LAW_HEADS or (len(words) > 2 and head.isdigit() and words[-2].lower() in LAW_HEADS):
        return WORK  # "the Working Time Regulations 1998"
    if any(words[i].lower() in LAW_OPENINGS and words[i + 1] == "of" for i in range(len(words) - 2)):
        return WORK  # "Federal Rules of Bankruptcy Procedure", "Code of Conduct"
    return None


# A street's word inside a name makes it an address, wherever it stands ("Terry Ave North").
_STREET_WORDS = frozenset(
    "ave avenue street road rd blvd boulevard lane highway hwy parkway pkwy marg nagar rue cedex strasse straße "
    "str weg gasse platz allee laan straat plein via viale piazza calle avenida rua ул улица проспект".split()
)


def _person_corrected(words: list[str]) -> str:
    """What a name typed person is when its words say it cannot be one."""
    if any(len(w) > 1 and w.isalpha() and w.isupper() and not (i and is_roman_numeral(w)) for i, w in enumerate(words)):
        return CONCEPT  # an acronym is not a person; "Louis XIV" is one, with his regnal number
    if len(words) > 1 and words[0].lower() in PLACE_PREFIXES:
        return LOCATION  # "San Ramon", "Santa Ana": a place's prefix
    if any(w.lower().rstrip(".") in _STREET_WORDS for w in words[1:]):
        return LOCATION  # "Terry Ave North", "Abbey Road": an address
    return PERSON


# Initials and a family name, as papers and letters cite people ("P. Marcel", "J.R. Smith").
_INITIALLED = re.compile(r"(?:[A-Z]\.\s?){1,3}[A-Z][a-z]+(?:-[A-Z][a-z]+)?")


# Capitalised words joined into one, as brands write their names ("AeroPress", "PlayStation", "iPhone",
# "eBird"): code by shape, a product when the sentence says one is had ("got an AeroPress").
_BRAND = re.compile(r"[a-z]?[A-Z][a-z]+(?:[A-Z][a-z]+)*")


# A word that names a gathering by its ending: "KubeCon", "PyCon", "RustConf", "DevFest", "BarCamp".
_EVENT_WORD = re.compile(r"[A-Z][a-z]+(?:Con|Conf|Fest|Camp)")


# The model's labels that the words around a name may overrule: its organisations and places are
# usually right, its people, works, groups and products of unknown words often are not.
_WEAK_LABELS = frozenset([PERSON, WORK, GROUP, PRODUCT, CONCEPT, LOCATION])


def type_from_context(span, entity_type: str) -> str | None:
    """A type the words around a name settle, or None: a title before it ("Dr Tomasz Kowal", "Judge
    Harcourt") or a known given name opening it ("Ingrid Halvorsen") make a person; a role in
    apposition says either ("the supplier, Kitlocker"); being where something was bought or booked
    from ("a brood box from Thornes") makes an organisation."""
    if entity_type not in _WEAK_LABELS and entity_type != ORGANIZATION:
        return None
    tokens = _name_tokens(span)
    if not tokens or is_foreign(span.doc):
        return None
    if titled(span) and all(t.text[:1].isupper() for t in tokens) and not any(t.is_upper for t in tokens):
        return PERSON
    role = role_in_apposition(span)
    if role is not None:
        return role  # "the supplier, Kitlocker", "the treasurer, Joanna Lewis"
    if (_lone_given_name(tokens) and _acts_as_person(tokens[0])) or (
        looks_like_full_name(tokens) and tokens[0].lower_ not in PLACE_PREFIXES and _acts_as_person(span.root)
    ):
        # Whatever the model said: "lunch with Priya", "ask Hiroshi", "dinner with Zeynep", "Patrick
        # Marcel wrote" (a "Mercedes service" stays the company, a "holiday in Florence" the city).
        return PERSON
    if entity_type != LOCATION and _moved_to_town(span, tokens):
        return LOCATION  # "moved the family to Kirkwall", "relocated to Tromsø"
    if entity_type == ORGANIZATION:
        return None  # "a policy with Adrian Flux": the model's organisation stands against a given name
    if sold_by(span):
        return ORGANIZATION
    if entity_type != LOCATION and looks_like_full_name(tokens):
        return PERSON
    if entity_type in (PERSON, CONCEPT) and _named_service(span, tokens):
        return ORGANIZATION
    return None


# Prepositions after which a name is a service one uses: "signed up for Strava", "a course on
# Coursera", "paid via Wise". Not "with": one has lunch with people.
_SERVICE_PREPOSITIONS = frozenset("on for via through using".split())


# Moving data or a service between providers: "moved the cluster to Hetzner", "migrated our photos
# from Flickr to Backblaze". What is moved says it: a town takes people and furniture, not servers.
_MOVE_VERBS = frozenset("move migrate switch transfer port upload sync copy backup relocate emigrate".split())
_DATA_NOUNS = frozenset(
    """
blog site website app apps service server servers cluster clusters database databases db repo repos repository
domain domains email mail photos pictures files backups backup data project projects vps hosting account
accounts docs documents notes music library workloads
""".split()
)


def _move_verb(preposition):
    """The verb a "to" or "from" hangs on, through the object between them ("moved [the side project]
    to"), or None when it is no verb of moving."""
    verb = preposition.head
    for _ in range(3):
        if verb.pos_ in ("VERB", "AUX") or verb.head is verb:
            break
        verb = verb.head
    if lemma_of(verb) in _MOVE_VERBS or verb.lower_.removesuffix("d").removesuffix("e") in _MOVE_VERBS:
        return verb
    return None


def _moved_to_town(span, tokens) -> bool:
    """One capitalised word no list knows (no English word, given or family name or organisation) that
    people or things that are no data move to: a town ("moved the family to Kirkwall", "we relocated
    to Tromsø"), which the model often calls an organisation."""
    root = span.root
    if len(tokens) != 1 or root.dep_ != "pobj" or root.head.lower_ != "to" or _data_moved_to(root.head):
        return False
    if _move_verb(root.head) is None:
        return False
    return _unknown_word(tokens[0]) and canonical_key(tokens[0].text, ORGANIZATION) not in organization_keys()


def _unknown_word(word) -> bool:
    """A capitalised word no list here knows: no acronym, code, English word, given or family name.
    What it names only its sentence can say (_named_service, _moved_to_town)."""
    text = word.text
    return (
        text[:1].isupper()
        and not text.isupper()
        and not looks_like_code(text)
        and word.lower_ not in english_words()
        and not is_first_name(text)
        and not is_family_name(text)
    )


def _data_moved_to(preposition) -> bool:
    """Whether "to" or "from" names where data or a service was moved: the verb moves and its object is
    a digital thing ("moved the side project to Hetzner")."""
    verb = _move_verb(preposition) if preposition.lower_ in ("to", "from") else None
    return verb is not None and any(child.dep_ == "dobj" and child.lower_ in _DATA_NOUNS for child in verb.children)


def _named_service(span, tokens) -> bool:
    """One capitalised word that is no English word, no known given or family name and no code, used
    through a preposition ("on Coursera", "for Strava"): a company or its service, which the model
    calls a person or nothing. In a place's preposition ("in", "at", "to") it may be a town."""
    if len(tokens) != 1 or span.root.dep_ != "pobj":
        return False
    if span.root.head.lower_ not in _SERVICE_PREPOSITIONS and not _data_moved_to(span.root.head):
        return False
    return _unknown_word(tokens[0]) and not _acts_as_person(tokens[0])  # "waited for Nkechi to reply"


def _lone_given_name(tokens) -> bool:
    """One capitalised word that is a known given name, no English word and no known organisation."""
    if len(tokens) != 1:
        return False
    word = tokens[0]
    return (
        word.is_title
        and is_first_name(word.text)
        and word.lower_ not in english_words()
        and canonical_key(word.text, "organization") not in organization_keys()
    )


def _said_by_context(span, key: str) -> str | None:
    """What the sentence says the name is (graph.extraction.context), unless a person's name or a
    known organisation is read or owned: "read Kahneman", "my Nationwide" keep their kind."""
    said = kind_from_context(span)
    if said is None or key in organization_keys() or is_first_name(span[0].text):
        return None
    return said


def shouted_word(name: str) -> bool:
    """An English word in capitals: a keyword of code (SQL's SELECT, INTERVAL) or emphasis."""
    return len(name) > 2 and name.isalpha() and name.isupper() and name.lower() in english_words()


def retype(span, name: str, key: str, entity_type: str, lowercase_words: set[str]) -> str | None:
    """The type a person would give this name (None: not an entity at all)."""
    if key in GAZETTEER:
        if key in AMBIGUOUS_TECH_TERMS and name.islower():
            return None  # "we react quickly", "in the spring"
        return TECHNOLOGY
    if shouted_word(name):
        return None  # "INTERVAL", "SELECT", "NOTE": code or emphasis, not a name
    if len(span) == 1 and span[0].is_sent_start and span[0].lower_ in _ROLE_TYPES:
        return None  # "Dentist appointment moved", "Landlord replied": a role, capitalised to open a sentence
    settled = type_for_name(name, key, entity_type)
    if settled is not None and settled != TECHNOLOGY:
        said = _said_by_context(span, key)
        if said is not None:
            return said
    if settled != entity_type:
        return settled
    if entity_type == TECHNOLOGY:
        return entity_type
    context = type_from_context(span, entity_type)
    if context is not None:
        return context
    if entity_type == PERSON:
        return PERSON if _could_be_person(span, lowercase_words) else CONCEPT
    if entity_type != CONCEPT and (
        name.lower() in lowercase_words or (len(name) > 1 and name.isupper() and entity_type == LOCATION)
    ):
        return CONCEPT  # "Meeting" beside "the meeting"; an acronym is rarely a place
    return entity_type
