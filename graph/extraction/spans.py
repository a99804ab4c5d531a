"""Entity spans in a parsed piece of text: the model's entities split, trimmed, widened and typed,
noun chunks as concepts, lone first names as the person the text names in full, and acronyms the
text defines filed under the acronym."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from graph.extraction.context import kind_from_context
from graph.extraction.keys import (
    GAZETTEER,
    canonical_key,
    display_name,
    is_meaningful,
    looks_like_code,
    names_a_page,
    singular,
)
from graph.extraction.lexicon import english_words, words_of
from graph.extraction.typing import (
    HUMAN_OBJECT_VERBS,
    is_family_name,
    is_first_name,
    is_foreign,
    retype,
    shouted_word,
    type_for_name,
    type_from_context,
)
from graph.vocabulary import (
    _GENERIC_MODIFIERS,
    AMBIGUOUS_TECH_TERMS,
    CONCEPT,
    GENERIC_NOUNS,
    LABEL_TYPES,
    LAW_HEADS,
    LOCATION,
    ORG_NAME_HEADS,
    ORGANIZATION,
    PERSON,
    PLACE_HEADS,
    STRUCTURE_WORDS,
    TECHNOLOGY,
)

_DROP_LEADING_POS = {"DET", "PRON", "NUM", "PUNCT", "CCONJ", "ADP", "PART", "SYM", "X", "SPACE", "INTJ"}
_CODE_CHARS = re.compile(r"[(){}\[\]=;:<>]")
# The same without the colon, which titles have ("Mission: Impossible").
_NOT_IN_NAMES = re.compile(r"[(){}\[\]=;<>]")


def _repeated(name: str) -> bool:
    """One word making up most of a name of three or more ("Margaret Margaret Margaret"): no name."""
    words = name.lower().split()
    return len(words) >= 3 and max(words.count(word) for word in set(words)) * 2 > len(words)


@dataclass
class Found:
    """An entity found in a piece of text, before it is stored: where it is and what it is."""

    key: str
    name: str
    type: str
    start: int  # in the piece
    end: int
    root: object  # spaCy Token


_DEFINED_ACRONYM = re.compile(r"\b((?:[A-Za-z][\w-]*\s+){1,7}[A-Za-z][\w-]*)\s*\(([A-Z][A-Za-z]{1,9}?)s?\)")
_MINOR_WORDS = frozenset("of and the for in on to a an with by".split())


def defined_acronyms(text: str) -> dict[str, str]:
    """Acronyms the text defines, "Service Level Objective (SLO)": long form's key -> acronym's key.
    The long form is filed under the acronym, so a note that only writes "SLO" names the same entity."""
    defined: dict[str, str] = {}
    for match in _DEFINED_ACRONYM.finditer(text):
        words, acronym = match.group(1).split(), match.group(2)
        letters = acronym.upper()
        for start in range(len(words)):
            major = [w for w in words[start:] if w.lower() not in _MINOR_WORDS or w == words[start]]
            initials = "".join(w[0].upper() for w in major)
            if initials == letters and words[start].lower() not in _MINOR_WORDS:
                long_form = " ".join(words[start:])
                for entity_type in (CONCEPT, TECHNOLOGY, None):
                    defined[canonical_key(long_form, entity_type)] = canonical_key(acronym, entity_type)
                break
    return defined


def entity_spans(doc) -> list[Found]:
    """The entities of a parsed piece, in text order, a defined long form filed under its acronym. The
    acronym is what its long form is: "TRA", which the model calls an organisation, is the concept
    "Theory of Reasoned Action (TRA)" defines."""
    found = _spans(doc)
    if "(" in doc.text:
        defined = defined_acronyms(doc.text)
        long_types: dict[str, str] = {}
        for item in found:
            if item.key in defined:
                item.key = defined[item.key]
                long_types.setdefault(item.key, item.type)
        for item in found:
            if item.key in long_types:
                item.type = long_types[item.key]
    return found


# A lower-case preposition inside a name joins two names the model ran together ("Kingsmeadow against
# Ashford Town", "Handel's Messiah at St Mary's Church"); "of" stays ("Bank of England"), and so does
# one between hyphens ("Southend-on-Sea").
_BRACKETS = frozenset("()[]")
_JOINING_PREPOSITIONS = frozenset("at against vs versus near with in from on".split())
_PLACE_PREPOSITIONS = frozenset("at near in".split())


def _entity_parts(ents) -> Iterator[tuple[object, str]]:
    """Each entity span with its label, split at a joining preposition (not a title's: "Alice in
    Wonderland")."""
    for ent in ents:
        start = ent.start
        label = ent.label_
        for token in ent[1:-1]:
            if token.is_space and _line_break_ends_name(token, ent.doc[start : token.i]):
                yield ent.doc[start : token.i], label
                start = token.i + 1
                continue
            if token.text in _BRACKETS:
                # "The World Health Organization (WHO": a name and the acronym it defines, two names.
                if token.i > start:
                    yield ent.doc[start : token.i], label
                start = token.i + 1
                continue
            if ent.label_ in ("WORK_OF_ART", "LAW", "EVENT"):
                continue
            doc = token.doc
            if (
                token.lower_ in _JOINING_PREPOSITIONS
                and token.is_lower
                and doc[token.i - 1].text != "-"
                and doc[token.i + 1].text != "-"
            ):
                yield doc[start : token.i], label
                start = token.i + 1
                # What follows "at", "in" or "near" is where ("the Curlew Sandpiper at Titchwell").
                label = "FAC" if token.lower_ in _PLACE_PREPOSITIONS else ent.label_
        yield (ent if start == ent.start else ent.doc[start : ent.end]), label


def _line_break_ends_name(space, before) -> bool:
    """Whether a name the model ran over a line break ends there: at a blank line (a paragraph's
    end), or after a line that held nothing but the name's first part (a heading: "Unresolved Staff
    Comments" over "Samsung Electronics reported…"). A name wrapped inside a sentence goes on."""
    if "\n" not in space.text:
        return False
    if space.text.count("\n") > 1:
        return True
    text = space.doc.text
    line_start = text.rfind("\n", 0, before.start_char) + 1
    return not _SECTION_NUMBER.sub("", text[line_start : before.start_char]).strip()


def _first_names(found: list[Found]) -> None:
    """A lone first or last name in a text that also names the whole person is that person ("Piotr can
    start" after "Piotr Nowak"), typed and filed as the person."""
    people = {}
    for item in found:
        if item.type == PERSON and " " in item.name:
            words = item.name.split()
            for word in (words[0], words[-1]):
                people.setdefault(word, set()).add((item.key, item.name))
    for item in found:
        match = people.get(item.name) if item.type in (PERSON, CONCEPT) else None
        if match and len(match) == 1:
            item.key, item.name = next(iter(match))
            item.type = PERSON


def _spans(doc) -> list[Found]:
    found: list[Found] = []
    covered: set[int] = set()
    lowercase_words = {t.lower_ for t in doc if t.is_lower and t.is_alpha}
    lowercase_words |= {singular(word) for word in lowercase_words}
    for ent, label in _entity_parts(doc.ents):
        if LABEL_TYPES.get(label) is None:
            covered.update(range(ent.start, ent.end))
            continue
        span, label = _trimmed(ent, label)
        if span is None:
            continue
        if _NOT_IN_NAMES.search(span.text) or form_label(span):
            # A name holds no brackets or equals signs: "golden_ratio(n" is a call in a code file.
            covered.update(range(min(ent.start, span.start), max(ent.end, span.end)))
            continue
        entity_type = LABEL_TYPES[label]
        name = display_name(span.text)
        key = canonical_key(name, entity_type)
        if not is_meaningful(name, key) or (entity_type in (PERSON, LOCATION) and _has_digit(name)) or _repeated(name):
            covered.update(range(min(ent.start, span.start), max(ent.end, span.end)))
            continue
        entity_type = retype(span, name, key, entity_type, lowercase_words)
        if entity_type is None or (entity_type == CONCEPT and is_foreign(doc)):
            continue  # in another language, a name the rules demoted is a fragment
        key = canonical_key(name, entity_type)
        covered.update(range(min(ent.start, span.start), max(ent.end, span.end)))
        if not _no_name(name, key, entity_type):
            found.append(Found(key, name, entity_type, span.start_char, span.end_char, span.root))
    if is_foreign(doc):
        # The noun chunks of another language parsed as English are fragments ("morgen", "über").
        found.sort(key=lambda f: f.start)
        return found
    found.extend(_chunk_names(doc, covered))
    _first_names(found)
    found.sort(key=lambda f: f.start)
    return found


def _chunk_names(doc, covered: set[int]) -> Iterator[Found]:
    """Concepts and leading proper names of the noun chunks no entity span covers."""
    text = doc.text
    for chunk in doc.noun_chunks:
        if any(i in covered for i in range(chunk.start, chunk.end)) or form_label(chunk):
            continue
        for item in (_concept(chunk, text), _proper_prefix(chunk, text)):
            if item is not None:
                yield item


_YEAR = re.compile(r"(1[89]|20)\d\d")


def _widen(span, label: str) -> tuple[object, str]:
    """The whole name where the model stopped short: a given name left in front of a one-word person
    ("Met Gwen Tallis"), a capitalised word in front of an organisation or place ("the Norfolk Bird
    Club"), a business named by a possessive ("Patel's Bakery"), a law's year."""
    doc = span.doc
    start, end = span.start, span.end
    before = doc[start - 1] if start > 0 else None
    if before is not None and before.pos_ == "PROPN" and before.text[:1].isupper() and not before.is_upper:
        if label in ("PERSON", "NORP") and len(span) == 1 and is_first_name(before.text):
            return doc[start - 1 : end], "PERSON"
        if label in ("ORG", "FAC") and not before.is_sent_start and not before.ent_type_:
            start -= 1
    after = doc[end : end + 2]
    if (
        len(after) == 2
        and after[0].lower_ in ("'s", "’s")
        and after[1].text[:1].isupper()
        and after[1].lower_ in ORG_NAME_HEADS | PLACE_HEADS
    ):
        return doc[start : end + 2], "ORG"  # the head word then says which
    if span[-1].lower_ in LAW_HEADS and len(after) and _YEAR.fullmatch(after[0].text):
        return doc[start : end + 1], "LAW"
    return doc[start:end], label


def _trimmed(ent, label: str) -> tuple[object | None, str]:
    """The name in an entity span: no leading article or punctuation, no trailing preposition, and
    widened where the model stopped short (None when nothing is left)."""
    span = ent
    while len(span) and (span[0].pos_ in ("DET", "PUNCT") or opening_verb(span[0])):
        span = span[1:]
    while len(span) and span[-1].is_alpha and span[-1].is_lower and span[-1].pos_ in ("ADP", "DET", "CCONJ"):
        span = span[:-1]  # "CI on": a name does not end in a preposition, an article or "and"
    if not len(span):
        return None, label
    return _widen(span, label)


def opening_verb(token) -> bool:
    """A sentence's first word that is its verb, though capitalised like the name after it: notes
    often leave out who did it ("Finished Project Hail Mary by Andy Weir", "Booked Lisbon flights").
    The model then reads the verb as the start of the name. It is one when it is a regular past form
    of an English verb (finish-ed, dial-led, marri-ed), no known given or family name ("Jared"), and no
    other word of its sentence is a verb: "United Airlines lost my bag" keeps its name. Or it is
    a request to reach someone, the verb before a known given name ("Call Hiroshi about the trip",
    "Email Priya the slides"; "Call Centre" keeps its name)."""
    if not token.is_sent_start or not token.is_title:
        return False
    word = token.lower_
    if word in HUMAN_OBJECT_VERBS:
        after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
        return after is not None and after.is_title and is_first_name(after.text)
    if len(token) < 5:
        return False
    if not word.endswith("ed") or is_first_name(token.text) or is_family_name(token.text):
        return False
    verbs = words_of("verb")
    stems = {word[:-2], word[:-1], word[:-3] + "y"}
    if word[-3] == word[-4]:
        stems.add(word[:-3])  # a doubled consonant: "dialled", "shopped"
    if not stems & verbs:
        return False
    return not any(other.tag_.startswith("VB") for other in token.sent if other.i != token.i)


def _english_word(word: str) -> bool:
    vocabulary = english_words()
    return word in vocabulary or singular(word) in vocabulary


def _no_name(name: str, key: str, entity_type: str) -> bool:
    """A page's or a field's name, or an ordinary English word left a concept: no entity."""
    return names_a_page(key, entity_type) or (entity_type == CONCEPT and _common_word(name, key))


def _common_word(name: str, key: str) -> bool:
    """One ordinary English word the rules left a concept ("Size", "Detail", "Handbook", "Indicate"): a
    heading, a label or a sentence's first word, no name. A known technology, an acronym or a given name
    that is also a word ("Bob", "Rose") is kept."""
    return (
        " " not in name
        and not name.isupper()
        and key not in GAZETTEER
        and _english_word(name.lower())
        and not is_first_name(name)
    )


def form_label(span) -> bool:
    """A field's label or a heading, not a name, when made of English words: at the start of a line
    and right before a colon ("DATES:", "Key Title:", "Amount Due:"), or two words or more that are
    the whole line but for a section's number ("Practice Tips", "Item 1B. Unresolved Staff
    Comments"). A speaker's name ("Alice:") or a signature ("Margaret Hughes") is no English word."""
    doc = span.doc
    text = doc.text
    line_start = text.rfind("\n", 0, span.start_char) + 1
    before = text[line_start : span.start_char]
    after = doc[span.end] if span.end < len(doc) else None
    if span[-1].text == ":" or (after is not None and after.text == ":"):
        if before.strip():
            return False
    else:
        line_end = text.find("\n", span.end_char)
        rest = text[span.end_char : len(text) if line_end < 0 else line_end]
        if rest.strip() or _SECTION_NUMBER.sub("", before).strip() or len(span) < 2:
            return False
    vocabulary = english_words()
    words = [t.lower_ for t in span if t.is_alpha]
    return bool(words) and all(
        word in vocabulary or singular(word) in vocabulary or word in STRUCTURE_WORDS for word in words
    )


# What numbers a section before its heading: "Item 1B.", "2.3", "IV.", "Chapter 3:", "§ 4".
_SECTION_NUMBER = re.compile(
    r"^\s*(?:(?:item|part|chapter|section|article|§)\s*)?(?:\d+[a-z]?|[ivxlc]+)?(?:[.)]\d*)*[.):]?\s*$",
    re.IGNORECASE,
)


def _has_digit(text: str) -> bool:
    return any(ch.isdigit() for ch in text)


def _concept(chunk, text: str) -> Found | None:
    """A noun chunk as a concept, or None when it is a pronoun or a generic word ("thing", "time")."""
    tokens = list(chunk)
    while tokens and (
        tokens[0].pos_ in _DROP_LEADING_POS
        or tokens[0].lower_ in _GENERIC_MODIFIERS
        or tokens[0].is_stop
        or opening_verb(tokens[0])
    ):
        tokens.pop(0)
    if not tokens or len(tokens) > 5:
        return None
    root = chunk.root
    if root.pos_ not in ("NOUN", "PROPN") or root not in tokens or root.lower_ in GENERIC_NOUNS:
        return None
    if len(tokens) == 1:
        token = tokens[0]
        # One lowercase common noun is too generic to be a node; acronyms and proper nouns are kept,
        # but not an English word capitalised as a heading or a label ("Address", "Origins", "Slide").
        if not (token.pos_ == "PROPN" or (token.is_upper and len(token) >= 2)):
            return None
        if not token.is_upper and token.lower_ not in GAZETTEER and _english_word(token.lower_):
            return None
    if any(t.pos_ == "PRON" or t.like_num or t.like_url or t.like_email for t in tokens):
        return None
    if _CODE_CHARS.search(text[chunk.start_char : chunk.end_char]) or looks_like_code(chunk.text):
        return None  # "def fib(n): return" is code, not a concept
    start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1])
    name = display_name(text[start:end])
    key = canonical_key(name, CONCEPT)
    if not is_meaningful(name, key):
        return None
    if key in GAZETTEER:
        if key in AMBIGUOUS_TECH_TERMS and name.islower():
            return None
        return Found(key, name, TECHNOLOGY, start, end, root)
    entity_type = _proper_name_type(chunk.doc[tokens[0].i : tokens[-1].i + 1], name, key)
    key = canonical_key(name, entity_type)
    # Checked on the name, as a symbol it lost can make a chunk look longer ("## Slide", "☐ Indicate").
    return None if _no_name(name, key, entity_type) else Found(key, name, entity_type, start, end, root)


# The common noun a name modifies can say what the name is: "the Arbor app", "the RSPB volunteer team".
# ("site", "office" and "branch" are left out: "the Titchwell site", "the London office" name places.)
_TECHNOLOGY_NOUNS = frozenset("app apps software platform website portal plugin".split())
_ORGANIZATION_NOUNS = frozenset("team committee staff volunteers volunteer members".split())


def _proper_prefix(chunk, text: str) -> Found | None:
    """The name at the front of a noun chunk that goes on in common nouns ("RSPB volunteer team",
    "Musicians' Union cover", "Arbor app"), which the model left unlabelled inside the phrase."""
    tokens = [t for t in chunk if t.pos_ not in _DROP_LEADING_POS and not opening_verb(t)]
    end = 0
    while end < len(tokens) and tokens[end].pos_ == "PROPN" and tokens[end].text[:1].isupper():
        end += 1
    if end == 0 or end == len(tokens) or not all(t.pos_ == "NOUN" and t.is_lower for t in tokens[end:]):
        return None
    if tokens[0].is_sent_start or any(t.ent_type_ for t in tokens[:end]):
        return None
    start, stop = tokens[0].idx, tokens[end - 1].idx + len(tokens[end - 1])
    name = display_name(text[start:stop])
    key = canonical_key(name, CONCEPT)
    if not is_meaningful(name, key) or looks_like_code(name) or shouted_word(name):
        return None
    if key in GAZETTEER:
        return Found(key, name, TECHNOLOGY, start, stop, tokens[end - 1])
    head = tokens[-1].lower_
    span = chunk.doc[tokens[0].i : tokens[end - 1].i + 1]
    if head in _TECHNOLOGY_NOUNS:
        entity_type = TECHNOLOGY
    elif head in _ORGANIZATION_NOUNS:
        entity_type = ORGANIZATION
    else:
        entity_type = _proper_name_type(span, name, key)
    return Found(canonical_key(name, entity_type), name, entity_type, start, stop, tokens[end - 1])


def _proper_name_type(span, name: str, key: str) -> str:
    """The type of a noun chunk the model did not label: a concept, unless it is a proper name
    whose head word, title, given name or context says what it names ("Bluebird Coaches", "Mr
    Hargreaves", "Ingrid Halvorsen", "Priya", "hinges from Hartley Fixings")."""
    if not all(t.text[:1].isupper() for t in span):
        return CONCEPT
    if len(span) == 1 and is_first_name(span[0].text) and not _english_word(span[0].lower_):
        return PERSON  # a given name that is no English word ("Priya is giving the talk"), first or not
    if span[0].is_sent_start and len(span) == 1:
        return CONCEPT
    settled = type_for_name(name, key, CONCEPT)
    if settled not in (CONCEPT, None):
        return settled
    return kind_from_context(span) or type_from_context(span, CONCEPT) or CONCEPT
