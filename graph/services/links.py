"""Memory links: memories that share distinctive entities or tags, or are close in meaning."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from functools import partial

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Aggregate, Count, Q
from django.utils import timezone
from pgvector.django import VectorField

from core.retry import run_with_retry

from graph.models import (EntityMention, MemoryLink)
from graph.notelinks import note_link_evidence
from graph.selectors import topical_tags
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import Memory, MemoryChunk
from graph.services.sql import lock_memories, lock_owner_graph

class _VectorAvg(Aggregate):
    function = "AVG"
    output_field = VectorField(dimensions=EMBEDDING_DIMENSIONS)


def _shared_weights(vectors: dict[int, dict], focus: set[int] | None, cap: int) -> dict[tuple[int, int], list]:
    """Every pair of memories that share a distinctive feature, with [Σ min(weight) over the features
    they share, Σ min(raw weight), number shared]; `vectors` maps memory -> feature -> (weight, raw).

    A feature carried by more than `cap` memories is too common to relate two memories by itself and
    would make the pair count quadratic, so it makes no pair; it still counts for the pairs the
    distinctive features make. Sums are built from the postings, touching only shared features.
    """
    postings: dict = defaultdict(list)
    for memory_id, carried in vectors.items():
        for feature, weight in carried.items():
            postings[feature].append((memory_id, weight))
    shared: dict[tuple[int, int], list] = {}
    common: dict[int, dict] = defaultdict(dict)
    for feature, members in postings.items():
        if len(members) > cap:
            for memory_id, weight in members:
                common[memory_id][feature] = weight
            continue
        members.sort()
        for i, (a, (weight_a, raw_a)) in enumerate(members):
            for b, (weight_b, raw_b) in members[i + 1:]:
                if focus is None or a in focus or b in focus:
                    sums = shared.setdefault((a, b), [0.0, 0.0, 0])
                    # The idf is the feature's, so the smaller weight is also the smaller raw weight.
                    sums[0] += min(weight_a, weight_b)
                    sums[1] += min(raw_a, raw_b)
                    sums[2] += 1
    for (a, b), sums in shared.items():
        mine, theirs = common.get(a), common.get(b)
        if mine and theirs:
            for feature, (weight, raw) in mine.items():
                if feature in theirs:
                    sums[0] += min(weight, theirs[feature][0])
                    sums[1] += min(raw, theirs[feature][1])
                    sums[2] += 1
    return shared


def _weighted_jaccard_pairs(features: dict[int, dict], focus: set[int] | None, cap: int, threshold: float):
    """(a, b, score, Σ min raw weight, number shared) for the pairs whose weighted Jaccard over
    idf-weighted features reaches the threshold. features: memory -> feature -> raw weight; a
    feature's idf is ln(1 + N/df). Σmax = Σa + Σb − Σmin, so only shared features are visited."""
    df = Counter(feature for carried in features.values() for feature in carried)
    idf = {feature: math.log(1 + len(features) / n) for feature, n in df.items()}
    vectors = {m: {f: (idf[f] * raw, raw) for f, raw in carried.items()} for m, carried in features.items()}
    totals = {m: sum(weight for weight, _ in vector.values()) for m, vector in vectors.items()}
    for (a, b), (low, raw_low, n) in _shared_weights(vectors, focus, cap).items():
        high = totals[a] + totals[b] - low
        score = low / high if high > 0 else 0.0
        if score >= threshold:
            yield a, b, min(1.0, score), raw_low, n


def _entity_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int], tuple[float, float]]:
    """Weighted Jaccard over the memories' entities, each weighted idf · (1 + ln mentions)."""
    features: dict[int, dict[int, float]] = defaultdict(dict)
    for memory_id, entity_id, n in (EntityMention.objects.filter(owner_id=owner_id)
                                    .values_list("memory_id", "entity_id").annotate(n=Count("id"))
                                    .values_list("memory_id", "entity_id", "n")):
        features[memory_id][entity_id] = 1 + math.log(n)
    cap = max(50, len(features) // 10)
    return {(a, b): (score, 1.0 - 0.5 ** shared) for a, b, score, _, shared
            in _weighted_jaccard_pairs(features, focus, cap, settings.KYBERNESIS_LINK_ENTITY_THRESHOLD)}


MANUAL_TAG_WEIGHT = 2.0


def _tag_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int], tuple[float, float]]:
    """Weighted Jaccard over the combined tags, each weighted idf · confidence (manual tags 2); where a
    memory came from (source, file type, provider) says nothing about what it is about, so structural
    tags are left out. Confidence is the mean of the shared tags' smaller weights, at most 1."""
    tags: dict[int, dict[str, float]] = {}
    for memory in Memory.objects.filter(owner_id=owner_id).only("pk", "tags", "manual_tags", "auto_tags", "source",
                                                                "metadata"):
        confidence = {item["tag"]: float(item.get("confidence", 1.0)) for item in memory.auto_tags or []}
        # A manual tag is a person's deliberate filing, so it weighs twice a keyword the tagger is sure of.
        confidence.update(dict.fromkeys(memory.manual_tags, MANUAL_TAG_WEIGHT))
        topical = {t: confidence.get(t, 1.0) for t in topical_tags(memory)}
        if topical:
            tags[memory.pk] = topical
    cap = max(100, len(tags) // 5)
    return {(a, b): (score, min(1.0, raw_low / shared)) for a, b, score, raw_low, shared
            in _weighted_jaccard_pairs(tags, focus, cap, settings.KYBERNESIS_LINK_TAG_THRESHOLD)}


def _semantic_evidence(owner_id: int, focus: set[int] | None,
                       existing: set[tuple[int, int]]) -> dict[tuple[int, int], tuple[float, float]]:
    """Cosine similarity of the memories' chunk centroids. New links go to each memory's closest
    neighbours above the threshold; a link already there stays while it is above the threshold."""
    rows = (MemoryChunk.objects.filter(owner_id=owner_id).values("memory_id")
            .annotate(centroid=_VectorAvg("embedding")).values_list("memory_id", "centroid"))
    ids, vectors = [], []
    for memory_id, centroid in rows:
        ids.append(memory_id)
        vectors.append(np.asarray(centroid, dtype=np.float32))
    if len(ids) < 2:
        return {}
    matrix = np.vstack(vectors)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    position = {memory_id: i for i, memory_id in enumerate(ids)}
    rows_of = [position[m] for m in ids if focus is None or m in focus]
    threshold = settings.KYBERNESIS_LINK_SEMANTIC_THRESHOLD
    neighbours = settings.KYBERNESIS_LINK_SEMANTIC_NEIGHBOURS
    partners: dict[int, set[int]] = defaultdict(set)
    for x, y in existing:
        partners[x].add(y)
        partners[y].add(x)
    found = {}
    for start in range(0, len(rows_of), 512):
        block = rows_of[start:start + 512]
        sims = matrix[block] @ matrix.T
        for row, i in zip(sims, block, strict=True):
            row[i] = -1.0
            best = np.argpartition(-row, min(neighbours, len(row) - 1))[:neighbours]
            candidates = {int(j) for j in best if row[j] >= threshold}
            a = ids[i]
            candidates |= {position[o] for o in partners[a] if o in position and row[position[o]] >= threshold}
            for j in candidates:
                pair = (min(a, ids[j]), max(a, ids[j]))
                score = float(min(1.0, row[j]))
                found[pair] = (score, 0.5 + 0.5 * (score - threshold) / max(1e-9, 1.0 - threshold))
    return found


def _links_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int, str], tuple[float, float]]:
    links = MemoryLink.objects.filter(owner_id=owner_id, reason=MemoryLink.Reason.SEMANTIC)
    if focus is not None:
        links = links.filter(Q(source_id__in=focus) | Q(target_id__in=focus))
    existing_semantic = set(links.values_list("source_id", "target_id"))
    found: dict[tuple[int, int, str], tuple[float, float]] = {}
    for reason, evidence in ((MemoryLink.Reason.SHARED_ENTITIES, _entity_evidence(owner_id, focus)),
                             (MemoryLink.Reason.SHARED_TAGS, _tag_evidence(owner_id, focus)),
                             (MemoryLink.Reason.SEMANTIC, _semantic_evidence(owner_id, focus, existing_semantic)),
                             (MemoryLink.Reason.LINKED_IN_NOTE, note_link_evidence(owner_id, focus))):
        for (a, b), value in evidence.items():
            found[(a, b, reason)] = value
    return found


def memory_links_refresh(*, owner, memory_ids: Sequence[int] | None = None, expire_all: bool = False) -> dict:
    """Create, reinforce and expire the links of these memories (or of all the owner's memories).

    A link exists while its evidence does: shared entities or shared topical tags (weighted Jaccard
    above a threshold) or close chunk centroids. "Reinforced" means the link was found again for a
    memory named in memory_ids (it was just created, changed or revisited), or its score rose; a
    refresh of everything (memory_ids=None) does not by itself make every link recent.

    With `expire_all`, the owner's whole evidence is read once and every link without evidence goes,
    not only those of these memories: the sleep cycle's one pass per owner instead of a refresh and
    then a memory_links_expire, which would read the same evidence twice.
    """
    owner_id = owner.pk if hasattr(owner, "pk") else int(owner)
    focus = None
    if memory_ids is not None:
        focus = set(Memory.objects.filter(owner_id=owner_id, pk__in=list(memory_ids)).values_list("pk", flat=True))
        if not focus and not expire_all:
            return {"created": 0, "reinforced": 0, "unchanged": 0, "expired": 0}
    # A deadlock with a delete of a neighbouring memory (whose row it is linked to) is retried, as is a
    # link to a memory deleted meanwhile.
    return run_with_retry(partial(_links_refresh, owner_id, focus, expire_all), vanished=True,
                          label="memory_links_refresh")


def _links_refresh(owner_id: int, focus: set[int] | None, expire_all: bool) -> dict:
    now = timezone.now()
    with transaction.atomic():
        if focus:
            # The memories' rows first, as every memory writer does (see core.retry); deleted ones drop out.
            focus = lock_memories(focus)
            if not focus and not expire_all:
                return {"created": 0, "reinforced": 0, "unchanged": 0, "expired": 0}
        lock_owner_graph(owner_id)
        found = _links_evidence(owner_id, None if expire_all else focus)
        links = MemoryLink.objects.filter(owner_id=owner_id)
        if focus is not None and not expire_all:
            links = links.filter(Q(source_id__in=focus) | Q(target_id__in=focus))
        existing = {(link.source_id, link.target_id, link.reason): link for link in links}
        expired = [link.pk for key, link in existing.items() if key not in found]
        MemoryLink.objects.filter(pk__in=expired).delete()
        to_create, to_update = [], []
        reinforced = unchanged = 0
        for (a, b, reason), (score, confidence) in found.items():
            link = existing.get((a, b, reason))
            if link is None:
                to_create.append((a, b, reason, score, confidence))
                continue
            if (focus is not None and (a in focus or b in focus)) or score > link.score + 0.01:
                link.last_reinforced_at = now
                reinforced += 1
            elif abs(score - link.score) < 1e-6 and abs(confidence - link.confidence) < 1e-6:
                unchanged += 1
                continue
            else:
                unchanged += 1
            to_update.append((link.pk, score, confidence, link.last_reinforced_at))
        _links_write(owner_id=owner_id, now=now, create=to_create, update=to_update)
    return {"created": len(to_create), "reinforced": reinforced, "unchanged": unchanged, "expired": len(expired)}


def _links_write(*, owner_id: int, now: datetime, create: list[tuple], update: list[tuple]) -> None:
    """New links (a, b, reason, score, confidence) and changed ones (id, score, confidence,
    reinforced at), each in one set-based statement; a whole-graph refresh touches tens of thousands."""
    with connection.cursor() as cursor:
        if create:
            a, b, reasons, scores, confidences = zip(*create, strict=True)
            cursor.execute(
                "INSERT INTO graph_memorylink (owner_id, source_id, target_id, reason, score, confidence, created_at, "
                "last_reinforced_at) SELECT %s, v.a, v.b, v.reason, v.score, v.confidence, %s, %s FROM "
                "unnest(%s::bigint[], %s::bigint[], %s::varchar[], %s::float8[], %s::float8[]) "
                "AS v(a, b, reason, score, confidence) ON CONFLICT (source_id, target_id, reason) DO NOTHING",
                [owner_id, now, now, list(a), list(b), list(reasons), list(scores), list(confidences)])
        if update:
            ids, scores, confidences, reinforced = zip(*update, strict=True)
            cursor.execute(
                "UPDATE graph_memorylink l SET score = v.score, confidence = v.confidence, last_reinforced_at = v.at "
                "FROM unnest(%s::bigint[], %s::float8[], %s::float8[], %s::timestamptz[]) "
                "AS v(id, score, confidence, at) "
                "WHERE l.id = v.id", [list(ids), list(scores), list(confidences), list(reinforced)])


def memory_links_expire(*, owner) -> int:
    """Delete the owner's links whose evidence is gone (a whole-graph refresh); returns how many went."""
    return memory_links_refresh(owner=owner, memory_ids=[], expire_all=True)["expired"]
