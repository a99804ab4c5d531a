"""Relations between the entities of a sentence: the dependency path between two names says which
relation holds, which way it points and how sure it is."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from graph.extraction.lexicon import lemma_of
from graph.extraction.spans import Found
from graph.vocabulary import (
    CONCEPT,
    CREATED,
    LEADS,
    LOCATED_IN,
    LOCATION,
    MEMBER_OF,
    PART_OF,
    PERSON,
    RELATED_TO,
    SYMMETRIC_RELATIONS,
    USES,
    WORKS_WITH,
)

# Confidence follows the kind of evidence: a verb or preposition that names the relation beats a
# plain dependency link, which beats two names merely sharing a sentence.
CONFIDENCE_NAMED = 0.85
CONFIDENCE_LOCATION = 0.8
CONFIDENCE_DEPENDENCY = 0.55
CONFIDENCE_COOCCURRENCE = 0.3

# A sentence contributes at most SENTENCE_ENTITIES entities to pairs. Two names further apart in its
# parse than MAX_PATH_EDGES merely share the sentence; a pair with a concept needs a word that names
# the relation once they are more than MAX_CONCEPT_PATH_EDGES apart.
SENTENCE_ENTITIES = 8
MAX_PATH_EDGES = 6
MAX_CONCEPT_PATH_EDGES = 3

_VERB_RELATIONS = {
    WORKS_WITH: {"work", "collaborate", "partner", "cooperate", "team", "coordinate"},
    MEMBER_OF: {"join", "member", "belong_to_team"},
    LOCATED_IN: {"locate", "base", "headquarter", "situate", "live", "reside", "station", "house"},
    CREATED: {
        "create",
        "found",
        "build",
        "develop",
        "invent",
        "write",
        "design",
        "launch",
        "release",
        "author",
        "establish",
        "produce",
        "introduce",
        "propose",
        "co-found",
        "cofound",
        "start",
    },
    USES: {"use", "utilize", "utilise", "employ", "leverage", "adopt", "rely", "depend", "apply", "run"},
    LEADS: {"lead", "manage", "head", "direct", "chair", "supervise", "oversee"},
    PART_OF: {"belong"},
}
_VERB_TO_RELATION = {verb: rel for rel, verbs in _VERB_RELATIONS.items() for verb in verbs}
_CONTAINS_VERBS = {"include", "contain", "comprise", "encompass", "own", "acquire"}
_PART_NOUNS = {
    "part",
    "division",
    "subsidiary",
    "branch",
    "unit",
    "department",
    "component",
    "module",
    "subset",
    "section",
    "piece",
    "member",
}
_LOCATION_PREPS = {"in", "at", "near", "inside", "within", "outside", "from"}
_SUBJECT_DEPS = {"nsubj", "nsubjpass", "csubj"}


@dataclass(frozen=True)
class RelationFound:
    """A relation between two entities of a chunk, by key, with its confidence and the sentence that says it."""

    source_key: str
    target_key: str
    relation_type: str
    confidence: float
    sentence: str


def _lca_paths(a, b) -> tuple[list, list] | None:
    ancestors_a = [a, *a.ancestors]
    index = {t.i: n for n, t in enumerate(ancestors_a)}
    for n, token in enumerate([b, *b.ancestors]):
        if token.i in index:
            return ancestors_a[: index[token.i] + 1], [b, *b.ancestors][: n + 1]
    return None


def _is_subject_side(path: list) -> bool:
    return any(t.dep_ in _SUBJECT_DEPS for t in path[:-1])


def _located(entity: Found, location: Found, loc_path: list) -> bool:
    """True when a location preposition on the location's side attaches to the entity itself, to a
    verb the entity is the subject of, or to a clause describing the entity ("the team based in X")."""
    if len(loc_path) < 3 or loc_path[1].dep_ != "prep" or loc_path[1].lower_ not in _LOCATION_PREPS:
        return False
    head, root = loc_path[2], entity.root.i
    if head.i == root:
        return True
    if head.pos_ in ("VERB", "AUX"):
        if any(child.i == root and child.dep_ in _SUBJECT_DEPS for child in head.children):
            return True
        if head.dep_ in ("relcl", "acl") and head.head.i == root:
            return True
    return False


def _argument_of(path: list) -> bool:
    """True when an entity is a direct argument of the verb at the top of its path: its subject or
    object, or the object of a preposition of that verb ("works with X", "created by X")."""
    middle = path[1:-1]
    return len(middle) <= 1 and all(t.pos_ == "ADP" or t.dep_ in ("prep", "agent") for t in middle)


_Relation = tuple[str, float, Found, Found]


def _relation(a: Found, b: Found) -> _Relation | None:
    """The relation between two entities of a sentence, with its confidence and direction."""
    concepts = (a.type == CONCEPT) + (b.type == CONCEPT)
    paths = _lca_paths(a.root, b.root)
    if paths is None or len(paths[0]) + len(paths[1]) - 2 > MAX_PATH_EDGES:
        if concepts:
            return None  # a concept merely sharing a sentence with something is noise
        return RELATED_TO, CONFIDENCE_COOCCURRENCE, a, b
    path_a, path_b = paths
    found = _location_relation(a, b, path_a, path_b) or _named_relation(a, b, path_a, path_b)
    if found is not None:
        return found
    if concepts and len(path_a) + len(path_b) - 2 > MAX_CONCEPT_PATH_EDGES:
        return None
    return RELATED_TO, CONFIDENCE_DEPENDENCY, a, b


def _location_relation(a: Found, b: Found, path_a: list, path_b: list) -> _Relation | None:
    """One entity located in a location ("the team based in Berlin", "San Francisco, California")."""
    if b.type == LOCATION and a.type != LOCATION and _located(a, b, path_b):
        return LOCATED_IN, CONFIDENCE_LOCATION, a, b
    if a.type == LOCATION and b.type != LOCATION and _located(b, a, path_a):
        return LOCATED_IN, CONFIDENCE_LOCATION, b, a
    if a.type == LOCATION and b.type == LOCATION and b.root.dep_ == "appos" and b.root.head.i == a.root.i:
        return LOCATED_IN, CONFIDENCE_LOCATION, a, b  # "San Francisco, California"
    return None


def _named_relation(a: Found, b: Found, path_a: list, path_b: list) -> _Relation | None:
    """A relation named by a word on the path between the two: a part noun ("part of", "member of")
    or the verb both are arguments of ("works with", "created by", "contains")."""
    between = [*path_a[1:], *path_b[1:-1]]
    subject_first = not _is_subject_side(path_b) or _is_subject_side(path_a)
    source, target = (a, b) if subject_first else (b, a)
    if any(t.dep_ == "agent" for t in [*path_a, *path_b]):
        # Passive voice: "Python was created by Guido" has its doer behind "by".
        by_a = any(t.dep_ == "agent" for t in path_a)
        source, target = (a, b) if by_a else (b, a)
    for token in between:
        lemma = token.lower_ if token.pos_ in ("ADP", "NOUN") else lemma_of(token)
        if token.pos_ == "NOUN" and lemma in _PART_NOUNS and any(t.lower_ == "of" for t in between):
            # "X is part of Y" / "X, a division of Y": the side reached through "of" is the whole.
            whole_b = any(t.lower_ == "of" for t in path_b[1:])
            relation = MEMBER_OF if lemma == "member" else PART_OF
            return relation, CONFIDENCE_NAMED, *((a, b) if whole_b else (b, a))
        if token.pos_ in ("VERB", "AUX") and token.i == path_a[-1].i and _argument_of(path_a) and _argument_of(path_b):
            found = _verb_relation(lemma, a, b, source, target)
            if found is not None:
                return found
    return None


def _verb_relation(lemma: str, a: Found, b: Found, source: Found, target: Found) -> _Relation | None:
    """The relation a verb names between its subject side (source) and the other side, if any."""
    if lemma in _CONTAINS_VERBS:
        return PART_OF, CONFIDENCE_NAMED, target, source
    relation = _VERB_TO_RELATION.get(lemma)
    if relation == LOCATED_IN and LOCATION not in (a.type, b.type):
        relation = None
    if relation is None:
        return None
    if relation == LOCATED_IN and source.type == LOCATION:
        source, target = target, source
    return relation, CONFIDENCE_NAMED, source, target


def _orient(relation: str, source: Found, target: Found) -> tuple[Found, Found]:
    """Symmetric relations get one canonical direction so "A works with B" and "B works with A" are one
    edge: a person first, else the key in alphabetical order."""
    if relation not in SYMMETRIC_RELATIONS:
        return source, target
    if (source.type == PERSON) != (target.type == PERSON):
        return (source, target) if source.type == PERSON else (target, source)
    return (source, target) if source.key <= target.key else (target, source)


def sentence_relations(found: list[Found]) -> list[RelationFound]:
    """The relations between the entities of each sentence, each pair once, in one direction."""
    relations: list[RelationFound] = []
    by_sentence: dict[int, list[Found]] = {}
    for item in found:
        by_sentence.setdefault(item.root.sent.start, []).append(item)
    seen: set[tuple[str, str, str]] = set()
    for items in by_sentence.values():
        distinct: dict[str, Found] = {}
        # Named entities take the sentence's places before concepts do.
        for item in sorted(items, key=lambda f: (f.type == CONCEPT, f.start)):
            if item.key not in distinct and len(distinct) < SENTENCE_ENTITIES:
                distinct[item.key] = item
        if len(distinct) < 2:
            continue
        sentence = " ".join(items[0].root.sent.text.split())[:500]
        for a, b in itertools.combinations(sorted(distinct.values(), key=lambda f: f.start), 2):
            result = _relation(a, b)
            if result is None:
                continue
            relation, confidence, source, target = result
            source, target = _orient(relation, source, target)
            marker = (source.key, target.key, relation)
            if marker in seen:
                continue
            seen.add(marker)
            relations.append(RelationFound(source.key, target.key, relation, confidence, sentence))
    return relations
