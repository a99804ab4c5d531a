"""What the words around a name say about the kind of thing it names, more surely than the model's
label: a title is read, watched or quoted (a work), an event is attended, a thing is someone's
("my Kindle": a product), a company hosts or insures something. Pure: spaCy tokens in, a type or
None out."""

from __future__ import annotations

from graph.extraction.lexicon import lemma_of, words_of
from graph.vocabulary import EVENT, ORGANIZATION, PRODUCT, WORK

# Verbs whose object is a work: a book read, a film watched, a record listened to.
_WORK_VERBS = frozenset("read reread watch rewatch binge narrate translate publish".split())
# Verbs whose object is an event: "attended KubeCon Europe", "registered for PyCon".
_EVENT_VERBS = frozenset("attend".split())
# Verbs after which "on", "with", "by" or "at" a name is a company that provides the service:
# "hosted on Hetzner", "insured with Aviva", "banks with Monzo".
_SERVICE_VERBS = frozenset("host deploy insure bank subscribe register".split())
_SERVICE_PREPOSITIONS = frozenset("on with by at through".split())
_POSSESSIVES = frozenset("my our your his her their".split())
# People named by a possessive: "my Mum", "our Nan" are people, not things owned.
_KIN = frozenset(
    "mum mam mom dad nan nana gran granny grandma grandpa nanna papa mama pa ma uncle aunt auntie cousin "
    "nephew niece grandad granddad".split()
)
_OPENING_QUOTES = '"“‘«„'
_CLOSING_QUOTES = '"”’»“'


def kind_from_context(span) -> str | None:
    """The type the words around a name settle, or None."""
    root = span.root
    head = root.head
    if root.dep_ in ("dobj", "pobj", "attr") and _verb_lemma(root) in _WORK_VERBS:
        return WORK  # "read Project Hail Mary", "listened to Running Up That Hill"
    if root.dep_ == "dobj" and lemma_of(head) in _EVENT_VERBS:
        return EVENT
    if root.dep_ == "pobj" and head.lower_ in _SERVICE_PREPOSITIONS and lemma_of(head.head) in _SERVICE_VERBS:
        return ORGANIZATION
    if quoted(span) and len([t for t in span if t.is_alpha]) > 1:
        return WORK  # a title in quotes: "Designing Data-Intensive Applications"
    if owned(span):
        return PRODUCT
    return None


def _verb_lemma(root) -> str:
    """The verb a name is the object of, through "to" ("listened to X") or "from" ("read from X")."""
    head = root.head
    if root.dep_ == "pobj" and head.lower_ in ("to", "from"):
        head = head.head
    return lemma_of(head) if head.pos_ in ("VERB", "AUX") else ""


def quoted(span) -> bool:
    """The name is the whole of a quotation: a quotation mark right before it and right after it."""
    text = span.doc.text
    start, end = span.start_char, span.end_char
    return start > 0 and end < len(text) and text[start - 1] in _OPENING_QUOTES and text[end] in _CLOSING_QUOTES


def owned(span) -> bool:
    """A capitalised name someone has or has one of ("my AeroPress", "on her Kindle", "got an
    AeroPress", "a Kindle Paperwhite"): the head of its phrase after a possessive or an indefinite
    article, so a thing, unless it is kin ("my Mum", "my Uncle Bob") or modifies a noun ("my Monzo
    card"). After an article the name must end in a word that is no English noun: "an American", "a
    Premier Inn" are not things one owns."""
    doc = span.doc
    before = doc[span.start - 1].lower_ if span.start else ""
    if before not in _POSSESSIVES and before not in ("a", "an"):
        return False
    if not all(t.text[:1].isupper() for t in span if t.is_alpha) or span[0].lower_ in _KIN:
        return False
    if before in ("a", "an") and (span[-1].lower_ in words_of("noun") or span[-1].lower_ in words_of("adj")):
        return False
    after = doc[span.end] if span.end < len(doc) else None
    return not (after is not None and after.pos_ in ("NOUN", "PROPN") and not after.is_punct)
