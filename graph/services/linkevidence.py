"""What two memories have in common, read from the owner's graph, tags and chunk embeddings: the
input of graph.linkrules for every pair worth judging.

Judging all N² pairs is out of the question at 100,000 memories, and needless: a pair can only be
linked by meaning if it is among either memory's nearest neighbours, or by shared things if it shares
a rare one. So the pairs judged are each memory's nearest neighbours (KYBERNESIS_LINK_SEMANTIC_NEIGHBOURS
of them), the pairs that share a name or tag of rarity RARE or more (at most √(2·COMMON_SHARE·N) memories carry one, so each gives
few pairs), and the pairs already linked (so a link is judged again, and expires, by the same rules).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from django.conf import settings
from django.db.models import Aggregate
from pgvector.django import VectorField

from graph.linkrules import NEIGHBOURHOOD, RARE, RARE_SHARED_MIN, SEMANTIC_FLOOR, PairEvidence, rarity
from graph.models import EntityMention
from graph.selectors import topical_tags
from graph.vocabulary import CONCEPT
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import TRASH_LAYER, Memory, MemoryChunk

CONCEPT_WEIGHT = 0.75  # a concept ("dead tuples") says less about a memory than a name does
BLOCK = 512  # rows of the similarity matrix computed at once

Pair = tuple[int, int]
Key = tuple[str, int | str]  # ("e", entity id) or ("t", tag)


class _VectorAvg(Aggregate):
    function = "AVG"
    output_field = VectorField(dimensions=EMBEDDING_DIMENSIONS)


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-")


class Features:
    """Each memory's names and topical tags: memory -> key -> weight (how firmly it carries it), with
    the label shown for each key and each key's rarity in the collection."""

    def __init__(self, owner_id: int, n_memories: int):
        self.n = n_memories
        self.carried: dict[int, dict[Key, float]] = defaultdict(dict)
        self.label: dict[Key, str] = {}
        self.manual: dict[int, set[str]] = {}
        names: dict[int, set[str]] = defaultdict(set)
        for memory_id, entity_id, name, entity_type in (
            EntityMention.objects.filter(owner_id=owner_id, memory__trashed_at=None)
            .values_list("memory_id", "entity_id", "entity__name", "entity__type")
            .distinct()
        ):
            key: Key = ("e", entity_id)
            self.carried[memory_id][key] = CONCEPT_WEIGHT if entity_type == CONCEPT else 1.0
            self.label[key] = name
            names[memory_id].add(_slug(name))
        for memory in Memory.objects.filter(owner_id=owner_id, trashed_at=None).only(
            "pk", "tags", "manual_tags", "auto_tags", "source", "metadata"
        ):
            confidence = {item["tag"]: min(1.0, float(item.get("confidence", 1.0))) for item in memory.auto_tags or []}
            confidence.update(dict.fromkeys(memory.manual_tags, 1.0))
            if memory.manual_tags:
                self.manual[memory.pk] = set(memory.manual_tags)
            for tag in topical_tags(memory):
                # An auto tag that repeats one of the memory's names ("postgresql" beside PostgreSQL)
                # is one thing shared, not two.
                if _slug(tag) in names[memory.pk] and tag not in memory.manual_tags:
                    continue
                key = ("t", tag)
                self.carried[memory.pk][key] = confidence.get(tag, 1.0)
                self.label[key] = tag
        df: dict[Key, int] = defaultdict(int)
        for carried in self.carried.values():
            for key in carried:
                df[key] += 1
        self.rarity = {key: rarity(count, n_memories) for key, count in df.items()}
        self.df = df
        self.norm = {
            memory_id: float(np.sqrt(sum((w * self.rarity[k]) ** 2 for k, w in carried.items())))
            for memory_id, carried in self.carried.items()
        }

    def rare_pairs(self, focus: set[int] | None) -> dict[Pair, int]:
        """Pairs (touching the focus, if any) that share at least one rare name or tag, with how many."""
        postings: dict[Key, list[int]] = defaultdict(list)
        for memory_id, carried in self.carried.items():
            for key in carried:
                if self.rarity[key] >= RARE:
                    postings[key].append(memory_id)
        pairs: dict[Pair, int] = defaultdict(int)
        for members in postings.values():
            if len(members) < 2:
                continue
            members.sort()
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    if focus is None or a in focus or b in focus:
                        pairs[(a, b)] += 1
        return pairs

    def filed(self, a: int, b: int) -> list[str]:
        """The rare tags the person gave both memories by hand."""
        if a not in self.manual or b not in self.manual:
            return []
        both = self.manual[a] & self.manual[b]
        return sorted(tag for tag in both if self.rarity.get(("t", tag), 0.0) >= RARE)

    def shared(self, a: int, b: int) -> tuple[float, list[tuple[str, float]], list[tuple[str, float]]]:
        """(overlap, shared names, shared tags) of two memories; each shared thing weighs its rarity
        times the lesser of the two memories' hold on it."""
        mine, theirs = self.carried.get(a, {}), self.carried.get(b, {})
        if len(theirs) < len(mine):
            mine, theirs = theirs, mine
        dot = 0.0
        entities: list[tuple[str, float]] = []
        tags: list[tuple[str, float]] = []
        for key, weight in mine.items():
            other = theirs.get(key)
            if other is None or self.rarity[key] <= 0:
                continue
            r = self.rarity[key]
            dot += weight * other * r * r
            item = (self.label[key], min(weight, other) * r)
            (entities if key[0] == "e" else tags).append(item)
        norms = self.norm.get(a, 0.0) * self.norm.get(b, 0.0)
        return (dot / norms if norms else 0.0), entities, tags


class Neighbourhoods:
    """The memories' chunk centroids (unit length), each memory's nearest neighbours and its
    neighbourhood similarity r (the mean similarity to its NEIGHBOURHOOD nearest)."""

    def __init__(self, owner_id: int):
        rows = (
            MemoryChunk.objects.filter(owner_id=owner_id)
            .exclude(tier=TRASH_LAYER)
            .values("memory_id")
            .annotate(centroid=_VectorAvg("embedding"))
            .values_list("memory_id", "centroid")
        )
        self.ids: list[int] = []
        vectors = []
        for memory_id, centroid in rows:
            self.ids.append(memory_id)
            vectors.append(np.asarray(centroid, dtype=np.float32))
        self.position = {memory_id: i for i, memory_id in enumerate(self.ids)}
        self.matrix = np.vstack(vectors) if vectors else np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        self.matrix /= np.maximum(np.linalg.norm(self.matrix, axis=1, keepdims=True), 1e-9)
        self.r: dict[int, float] = {}
        self.nearest: dict[int, list[int]] = {}

    def scan(self, memory_ids: Iterable[int]) -> None:
        """Compute r and the nearest (KYBERNESIS_LINK_SEMANTIC_NEIGHBOURS of them, each of similarity
        SEMANTIC_FLOOR or more) of these memories."""
        rows = [self.position[m] for m in memory_ids if m in self.position and m not in self.r]
        n = len(self.ids)
        candidates = settings.KYBERNESIS_LINK_SEMANTIC_NEIGHBOURS
        take = min(max(NEIGHBOURHOOD, candidates), n - 1)
        for start in range(0, len(rows), BLOCK):
            block = rows[start : start + BLOCK]
            sims = self.matrix[block] @ self.matrix.T
            for row, i in zip(sims, block, strict=True):
                memory_id = self.ids[i]
                row[i] = -np.inf
                if take <= 0:
                    self.r[memory_id], self.nearest[memory_id] = SEMANTIC_FLOOR, []
                    continue
                best = np.argpartition(-row, take - 1)[:take]
                best = best[np.argsort(-row[best])]
                near = [float(v) for v in row[best[:NEIGHBOURHOOD]]]
                # A collection too small to give a memory a neighbourhood measures it against the floor.
                near += [SEMANTIC_FLOOR] * (NEIGHBOURHOOD - len(near))
                self.r[memory_id] = float(np.mean(near))
                self.nearest[memory_id] = [self.ids[j] for j in best[:candidates] if row[j] >= SEMANTIC_FLOOR]

    def similarities(self, pairs: Iterable[Pair]) -> dict[Pair, float]:
        """The similarity of each pair whose two memories both have chunks, computed in blocks."""
        known = [pair for pair in pairs if pair[0] in self.position and pair[1] in self.position]
        found: dict[Pair, float] = {}
        for start in range(0, len(known), 100_000):
            block = known[start : start + 100_000]
            left = self.matrix[[self.position[a] for a, _ in block]]
            right = self.matrix[[self.position[b] for _, b in block]]
            found.update(zip(block, np.einsum("ij,ij->i", left, right).tolist(), strict=True))
        return found


def pair_evidence(owner_id: int, focus: set[int] | None, existing: Iterable[Pair]) -> dict[Pair, PairEvidence]:
    """Every pair worth judging (see the module docstring), touching the focus when there is one,
    with what it has in common."""
    n_memories = Memory.objects.filter(owner_id=owner_id, trashed_at=None).count()
    features = Features(owner_id, n_memories)
    space = Neighbourhoods(owner_id)
    space.scan(space.ids if focus is None else sorted(focus))
    rare = features.rare_pairs(focus)
    pairs = set(rare)
    pairs.update(p for p in existing if focus is None or p[0] in focus or p[1] in focus)
    for memory_id, near in list(space.nearest.items()):
        if focus is None or memory_id in focus:
            pairs.update((min(memory_id, other), max(memory_id, other)) for other in near)
    similarity = space.similarities(pairs)
    # Only pairs that could pass a rule are weighed (graph.linkrules): close enough in meaning, or
    # sharing enough rare things (one, if it may be a filing). The rest would only come out unlinked.
    judged = [
        pair
        for pair in pairs
        if similarity.get(pair, 0.0) >= SEMANTIC_FLOOR
        or rare.get(pair, 0) >= RARE_SHARED_MIN
        or (rare.get(pair, 0) and pair[0] in features.manual and pair[1] in features.manual)
    ]
    space.scan({m for pair in judged for m in pair})
    read = _read_by_the_model(owner_id, {m for pair in judged for m in pair})
    found: dict[Pair, PairEvidence] = {}
    for a, b in judged:
        overlap, entities, tags = features.shared(a, b)
        if (a, b) in similarity:
            sim = similarity[(a, b)]
            standing = 2 * sim - space.r[a] - space.r[b]
        else:  # a memory with no chunks yet: only what it shares can speak for it
            sim, standing = 0.0, 0.0
        found[(a, b)] = PairEvidence(
            similarity=sim,
            standing=standing,
            overlap=overlap,
            entities=entities,
            tags=tags,
            filed=features.filed(a, b),
            readable=a in read and b in read,
        )
    return found


def _read_by_the_model(owner_id: int, memory_ids: set[int]) -> set[int]:
    """Those of the memories whose language the embedding model reads (or is not known)."""
    languages = settings.KYBERNESIS_EMBEDDING_LANGUAGES
    if "*" in languages or not memory_ids:
        return set(memory_ids)
    rows = Memory.all_objects.filter(owner_id=owner_id, pk__in=memory_ids).values_list("pk", "language")
    return {pk for pk, language in rows if not language or language in languages}
