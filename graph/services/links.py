"""Memory links: memories that share distinctive entities or tags, or are close in meaning."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from functools import partial

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Aggregate, Q
from django.utils import timezone
from pgvector.django import VectorField

from core.retry import run_with_retry
from graph.maillinks import attachment_link_evidence, thread_link_evidence
from graph.models import EntityMention, MemoryLink
from graph.notelinks import note_link_evidence
from graph.selectors import topical_tags
from graph.services.sql import lock_memories, lock_owner_graph
from graph.vocabulary import CONCEPT
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import TRASH_LAYER, ActivityKind, Memory, MemoryChunk
from memories.services.activity import activities_record


class _VectorAvg(Aggregate):
    function = "AVG"
    output_field = VectorField(dimensions=EMBEDDING_DIMENSIONS)


# --- How much two memories share ------------------------------------------------------------------
#
# Every threshold is relative to the owner's collection, so the same rules hold at 10 memories and
# at 100,000. A feature (an entity, a tag) counts by how distinctive it is there: its idf, ln(N/df),
# over ln N, runs from 0 (every memory has it) to 1 (one memory has it). A feature carried by
# √N memories scores 0.5; two memories are linked when what they share adds up to LINK_EVIDENCE:
#
# * one named entity (a person, place, organisation, technology...) carried by at most √N memories,
#   or one concept ("dead tuples", "tempo run") carried by at most ∛N (concepts weigh CONCEPT_WEIGHT),
#   or several less distinctive ones together;
# * likewise for topical tags: one tag on at most √N memories, or a manual tag on more;
# * by meaning: chunk centroids whose cosine similarity is among the closest SEMANTIC_PERCENTILE of
#   the owner's pairs and at least SEMANTIC_FLOOR, to each memory's SEMANTIC_NEIGHBOURS nearest.
#
# Each memory keeps its PER_MEMORY strongest links of each kind, so a hub never links to thousands.
LINK_EVIDENCE = 0.5
CONCEPT_WEIGHT = 0.75
MANUAL_TAG_WEIGHT = 1.5
PER_MEMORY = 12
SEMANTIC_PERCENTILE = 99.0
SEMANTIC_FLOOR = 0.4
SAMPLE_PAIRS = 20_000


def _distinctiveness(df: int, n: int) -> float:
    n = max(n, 4)
    return max(0.0, math.log(n / max(df, 1)) / math.log(n))


def _shared_features(
    features: dict[int, dict], focus: set[int] | None, n_memories: int
) -> dict[tuple[int, int], tuple[float, list]]:
    """Pairs of memories whose shared features add up to LINK_EVIDENCE, each with (evidence, the shared
    features most distinctive first). features: memory -> feature -> weight (0..1.5)."""
    postings: dict = defaultdict(list)
    for memory_id, carried in features.items():
        for feature, weight in carried.items():
            postings[feature].append((memory_id, weight))
    idf = {feature: _distinctiveness(len(members), n_memories) for feature, members in postings.items()}
    shared, common = _pairs_by_feature(postings, idf, focus, n_memories)
    found = {}
    for (a, b), items in shared.items():
        mine, theirs = common.get(a), common.get(b)
        if mine and theirs:
            items.extend((min(w, theirs[f]) * idf[f], f) for f, w in mine.items() if f in theirs)
        evidence = sum(value for value, _ in items)
        if evidence >= LINK_EVIDENCE:
            found[(a, b)] = (evidence, [f for _, f in sorted(items, key=lambda item: -item[0])])
    return _strongest(found, focus)


def _pairs_by_feature(
    postings: dict, idf: dict, focus: set[int] | None, n_memories: int
) -> tuple[dict[tuple[int, int], list], dict[int, dict]]:
    """Walk the postings: each pair (touching the focus, if any) with the (value, feature) items of the
    features it shares, and each memory's common features (those on more memories than the cap),
    which only add to pairs that other features make."""
    # A feature on more memories than this scores below LINK_EVIDENCE / max weight even alone and
    # would make the pair count quadratic; it still adds to pairs that others make.
    cap = max(2, int(n_memories ** (1 - LINK_EVIDENCE / MANUAL_TAG_WEIGHT)) + 1)
    shared: dict[tuple[int, int], list] = {}
    common: dict[int, dict] = defaultdict(dict)
    for feature, members in postings.items():
        if len(members) < 2:
            continue
        if len(members) > cap:
            for memory_id, weight in members:
                common[memory_id][feature] = weight
            continue
        members.sort()
        for i, (a, weight_a) in enumerate(members):
            for b, weight_b in members[i + 1 :]:
                if focus is None or a in focus or b in focus:
                    shared.setdefault((a, b), []).append((min(weight_a, weight_b) * idf[feature], feature))
    return shared, common


def _strongest(found: dict[tuple[int, int], tuple], focus: set[int] | None) -> dict[tuple[int, int], tuple]:
    """Each memory's PER_MEMORY strongest pairs (by the first value); a pair stays if it is among
    either memory's (among a focus memory's, when only some memories are refreshed)."""
    ranked: dict[int, list] = defaultdict(list)
    for (a, b), value in found.items():
        ranked[a].append((value[0], (a, b)))
        ranked[b].append((value[0], (a, b)))
    keep: set[tuple[int, int]] = set()
    for memory_id, pairs in ranked.items():
        if focus is not None and memory_id not in focus:
            continue
        pairs.sort(key=lambda item: -item[0])
        keep.update(pair for _, pair in pairs[:PER_MEMORY])
    return {pair: value for pair, value in found.items() if pair in keep}


def _memory_count(owner_id: int) -> int:
    return Memory.objects.filter(owner_id=owner_id).count()


def _entity_evidence(owner_id: int, focus: set[int] | None, n_memories: int) -> dict[tuple[int, int], tuple]:
    """Shared entities, concepts weighing CONCEPT_WEIGHT; evidence lists their names."""
    features: dict[int, dict[int, float]] = defaultdict(dict)
    names: dict[int, str] = {}
    for memory_id, entity_id, name, entity_type in (
        EntityMention.objects.filter(owner_id=owner_id)
        .values_list("memory_id", "entity_id", "entity__name", "entity__type")
        .distinct()
    ):
        features[memory_id][entity_id] = CONCEPT_WEIGHT if entity_type == CONCEPT else 1.0
        names[entity_id] = name
    return {
        pair: (evidence, [names[f] for f in shared])
        for pair, (evidence, shared) in _shared_features(features, focus, n_memories).items()
    }


def _tag_evidence(owner_id: int, focus: set[int] | None, n_memories: int) -> dict[tuple[int, int], tuple]:
    """Shared topical tags: an auto tag weighs its confidence, a manual tag (a person's deliberate
    filing) MANUAL_TAG_WEIGHT. Where a memory came from (source, file type, provider) says nothing
    about what it is about, so structural tags are left out."""
    tags: dict[int, dict[str, float]] = {}
    for memory in Memory.objects.filter(owner_id=owner_id).only(
        "pk", "tags", "manual_tags", "auto_tags", "source", "metadata"
    ):
        confidence = {item["tag"]: min(1.0, float(item.get("confidence", 1.0))) for item in memory.auto_tags or []}
        confidence.update(dict.fromkeys(memory.manual_tags, MANUAL_TAG_WEIGHT))
        topical = {t: confidence.get(t, 1.0) for t in topical_tags(memory)}
        if topical:
            tags[memory.pk] = topical
    return _shared_features(tags, focus, n_memories)


def _semantic_threshold(matrix: np.ndarray) -> float:
    """The owner's SEMANTIC_PERCENTILE of pairwise similarity (all pairs, or a sample of them in a
    large collection), and never below SEMANTIC_FLOOR."""
    n = len(matrix)
    if n * (n - 1) // 2 <= SAMPLE_PAIRS:
        sims = (matrix @ matrix.T)[np.triu_indices(n, k=1)]
    else:
        rng = np.random.default_rng(n)
        a, b = rng.integers(0, n, SAMPLE_PAIRS), rng.integers(0, n, SAMPLE_PAIRS)
        keep = a != b
        sims = np.einsum("ij,ij->i", matrix[a[keep]], matrix[b[keep]])
    return max(SEMANTIC_FLOOR, float(np.percentile(sims, SEMANTIC_PERCENTILE)))


def _semantic_evidence(
    owner_id: int, focus: set[int] | None, existing: set[tuple[int, int]]
) -> dict[tuple[int, int], tuple]:
    """Cosine similarity of the memories' chunk centroids. New links go to each memory's closest
    neighbours above the owner's threshold; a link already there stays while it is above it."""
    rows = (
        MemoryChunk.objects.filter(owner_id=owner_id)
        .exclude(tier=TRASH_LAYER)
        .values("memory_id")
        .annotate(centroid=_VectorAvg("embedding"))
        .values_list("memory_id", "centroid")
    )
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
    # The same products computed in another order differ in the last float32 bits: a pair exactly at
    # the threshold (with two memories, the one pair is) must not fall below it by rounding.
    threshold = _semantic_threshold(matrix) - 1e-6
    neighbours = settings.KYBERNESIS_LINK_SEMANTIC_NEIGHBOURS
    partners: dict[int, set[int]] = defaultdict(set)
    for x, y in existing:
        partners[x].add(y)
        partners[y].add(x)
    found: dict[tuple[int, int], tuple] = {}
    for start in range(0, len(rows_of), 512):
        block = rows_of[start : start + 512]
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
                found[pair] = (score, [])
    return found


def _links_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int, str], tuple[float, float, str]]:
    """(a, b, reason) -> (score, confidence, evidence) for every pair that has evidence."""
    links = MemoryLink.objects.filter(owner_id=owner_id, reason=MemoryLink.Reason.SEMANTIC)
    if focus is not None:
        links = links.filter(Q(source_id__in=focus) | Q(target_id__in=focus))
    existing_semantic = set(links.values_list("source_id", "target_id"))
    n_memories = _memory_count(owner_id)
    found: dict[tuple[int, int, str], tuple[float, float, str]] = {}
    for reason, evidence in (
        (MemoryLink.Reason.SHARED_ENTITIES, _entity_evidence(owner_id, focus, n_memories)),
        (MemoryLink.Reason.SHARED_TAGS, _tag_evidence(owner_id, focus, n_memories)),
        (MemoryLink.Reason.SEMANTIC, _semantic_evidence(owner_id, focus, existing_semantic)),
        (MemoryLink.Reason.LINKED_IN_NOTE, _note_evidence(owner_id, focus)),
        (MemoryLink.Reason.MAIL_THREAD, _certain(thread_link_evidence(owner_id, focus))),
        (MemoryLink.Reason.MAIL_ATTACHMENT, _certain(attachment_link_evidence(owner_id, focus))),
    ):
        for (a, b), (value, shared) in evidence.items():
            if reason in _CERTAIN_OR_SEMANTIC:
                score = confidence = value
            else:
                # Evidence of LINK_EVIDENCE is a link; twice that is as sure as shared features get.
                score = min(1.0, value / (2 * LINK_EVIDENCE))
                confidence = min(1.0, 0.5 + 0.5 * (value - LINK_EVIDENCE) / LINK_EVIDENCE)
            found[(a, b, reason)] = (round(score, 4), round(confidence, 4), _evidence_text(shared))
    return found


_CERTAIN_OR_SEMANTIC = (
    MemoryLink.Reason.SEMANTIC,
    MemoryLink.Reason.LINKED_IN_NOTE,
    MemoryLink.Reason.MAIL_THREAD,
    MemoryLink.Reason.MAIL_ATTACHMENT,
)


def _certain(pairs: dict[tuple[int, int], tuple[float, float]]) -> dict[tuple[int, int], tuple[float, list]]:
    """Links the material itself states (a reply's headers, an attachment): score 1, nothing to list."""
    return {pair: (1.0, []) for pair in pairs}


def _note_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int], tuple[float, list]]:
    """[[wikilinks]] between notes: certain links, shown as "linked in a note"."""
    return {pair: (1.0, []) for pair in note_link_evidence(owner_id, focus)}


def _evidence_text(shared: list) -> str:
    """The shared names or tags, most distinctive first, as many as fit the field."""
    text = ""
    for item in shared[:5]:
        item = str(item).replace("|", "/")
        if len(text) + len(item) + 1 > 300:
            break
        text = f"{text}|{item}" if text else item
    return text


def memory_links_refresh(*, owner, memory_ids: Sequence[int] | None = None, expire_all: bool = False) -> dict:
    """Create, reinforce and expire the links of these memories (or of all the owner's memories).

    A link exists while its evidence does: distinctive shared entities or topical tags, or chunk
    centroids among the owner's closest pairs (thresholds relative to the collection, see above);
    each keeps what the two memories share, for the memory page to say why they are linked. "Reinforced" means the link was found again for a
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
    return run_with_retry(
        partial(_links_refresh, owner_id, focus, expire_all), vanished=True, label="memory_links_refresh"
    )


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
        # A trashed memory has no evidence now, yet its links stay for a restore to bring back.
        links = MemoryLink.objects.filter(owner_id=owner_id, source__trashed_at=None, target__trashed_at=None)
        if focus is not None and not expire_all:
            links = links.filter(Q(source_id__in=focus) | Q(target_id__in=focus))
        existing = {(link.source_id, link.target_id, link.reason): link for link in links}
        expired = [link.pk for key, link in existing.items() if key not in found]
        MemoryLink.objects.filter(pk__in=expired).delete()
        to_create, to_update = [], []
        reinforced = unchanged = 0
        for (a, b, reason), (score, confidence, evidence) in found.items():
            link = existing.get((a, b, reason))
            if link is None:
                to_create.append((a, b, reason, score, confidence, evidence))
                continue
            if (focus is not None and (a in focus or b in focus)) or score > link.score + 0.01:
                link.last_reinforced_at = now
                reinforced += 1
            elif (
                abs(score - link.score) < 1e-6
                and abs(confidence - link.confidence) < 1e-6
                and evidence == link.evidence
            ):
                unchanged += 1
                continue
            else:
                unchanged += 1
            to_update.append((link.pk, score, confidence, evidence, link.last_reinforced_at))
        _links_write(owner_id=owner_id, now=now, create=to_create, update=to_update)
        _links_record(owner_id, to_create)
    return {"created": len(to_create), "reinforced": reinforced, "unchanged": unchanged, "expired": len(expired)}


def _links_write(*, owner_id: int, now: datetime, create: list[tuple], update: list[tuple]) -> None:
    """New links (a, b, reason, score, confidence, evidence) and changed ones (id, score, confidence,
    evidence, reinforced at), each in one set-based statement; a whole-graph refresh touches tens of
    thousands."""
    with connection.cursor() as cursor:
        if create:
            a, b, reasons, scores, confidences, evidence = zip(*create, strict=True)
            cursor.execute(
                "INSERT INTO graph_memorylink (owner_id, source_id, target_id, reason, score, confidence, evidence, "
                "created_at, last_reinforced_at) SELECT %s, v.a, v.b, v.reason, v.score, v.confidence, v.evidence, "
                "%s, %s FROM unnest(%s::bigint[], %s::bigint[], %s::varchar[], %s::float8[], %s::float8[], "
                "%s::varchar[]) AS v(a, b, reason, score, confidence, evidence) "
                "ON CONFLICT (source_id, target_id, reason) DO NOTHING",
                [owner_id, now, now, list(a), list(b), list(reasons), list(scores), list(confidences), list(evidence)],
            )
        if update:
            ids, scores, confidences, evidence, reinforced = zip(*update, strict=True)
            cursor.execute(
                "UPDATE graph_memorylink l SET score = v.score, confidence = v.confidence, evidence = v.evidence, "
                "last_reinforced_at = v.at FROM unnest(%s::bigint[], %s::float8[], %s::float8[], %s::varchar[], "
                "%s::timestamptz[]) AS v(id, score, confidence, evidence, at) WHERE l.id = v.id",
                [list(ids), list(scores), list(confidences), list(evidence), list(reinforced)],
            )


LINKED_NAMED = 5  # the linked memories an activity entry names (it counts them all)


def _links_record(owner_id: int, created: list[tuple]) -> None:
    """One "linked" activity entry per memory that gained links, naming the memories it is now linked to."""
    if not created:
        return
    partners: dict[int, set[int]] = defaultdict(set)
    for a, b, *_ in created:
        partners[a].add(b)
        partners[b].add(a)
    titles = {
        m.pk: m for m in Memory.objects.filter(owner_id=owner_id, pk__in=list(partners)).only("pk", "owner_id", "title")
    }
    memories = [titles[pk] for pk in sorted(partners) if pk in titles]
    details = [
        {
            "count": len(partners[m.pk]),
            "with": [
                {"id": pk, "title": titles[pk].title} for pk in sorted(partners[m.pk])[:LINKED_NAMED] if pk in titles
            ],
        }
        for m in memories
    ]
    activities_record(memories=memories, kind=ActivityKind.LINKED, details=details)


def memory_links_expire(*, owner) -> int:
    """Delete the owner's links whose evidence is gone (a whole-graph refresh); returns how many went."""
    return memory_links_refresh(owner=owner, memory_ids=[], expire_all=True)["expired"]
