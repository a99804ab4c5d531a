"""Writes to the knowledge graph: extraction into entities, mentions and relationships; memory links.

Every function here is idempotent and batch-friendly: the upload task and the sleep agent's Link
step call the same ones, and running them twice changes nothing the second time.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Aggregate, Count, Exists, F, OuterRef, Q
from django.utils import timezone
from pgvector.django import VectorField

from graph import extraction
from kybernesis import workers
from graph.models import (ALIASED_SQL, Entity, EntityMention, EntityType, MemoryLink, Relationship,
                          RelationshipEvidence)
from graph.notelinks import note_link_evidence
from graph.selectors import topical_tags
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import Memory, MemoryChunk

# Serialises graph writes per owner, so two workers extracting memories of one person cannot
# race on creating the same entity or recounting it.
_GRAPH_LOCK_NAMESPACE = 7_411


def _lock_owner_graph(owner_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_GRAPH_LOCK_NAMESPACE, owner_id])


# --- Extraction -------------------------------------------------------------------------------------


# Characters of text per unit of extraction work (about 80 full chunks, or 300 short notes).
# Units are stored one by one as they arrive while the workers go on with the next ones, and each
# store has a fixed cost (recounts, renormalisation); a memory's chunks are never split.
EXTRACT_UNIT_CHARS = 100_000


def graph_extract_memories(*, memory_ids: Sequence[int]) -> dict:
    """Extract (or refresh) the entities, mentions and relationships of these memories.

    A memory's previous mentions and evidence are replaced, never added to, so re-processing is
    idempotent; entities and relationships that lose their last evidence are deleted. Memories that
    no longer exist are skipped. Each unit of about EXTRACT_UNIT_CHARS characters is written in its own
    transaction as soon as it is extracted. Returns counts.
    """
    ids = sorted({int(i) for i in memory_ids})
    hashes = dict(Memory.objects.filter(pk__in=ids).values_list("pk", "content_hash"))
    rows = list(MemoryChunk.objects.filter(memory_id__in=ids).order_by("memory_id", "position")
                .values_list("id", "memory_id", "owner_id", "text"))
    limit = settings.KYBERNESIS_GRAPH_MAX_CHUNK_CHARS
    processes = workers.processes()
    # Small calls still give every worker a share: at least two units per worker when the text allows.
    unit_chars = max(4_000, min(EXTRACT_UNIT_CHARS,
                                sum(min(len(row[3]), limit) for row in rows) // (2 * processes) + 1))
    units: list[list[tuple]] = []
    size = 0
    for row in rows:
        if not units or (size >= unit_chars and units[-1][-1][1] != row[1]):
            units.append([])
            size = 0
        units[-1].append(row)
        size += min(len(row[3]), limit)
    # Memories without chunks (gone since the task was queued) still drop their old graph rows.
    chunked = {row[1] for row in rows}
    chunkless = [(None, memory_id, None, None) for memory_id in hashes if memory_id not in chunked]
    if chunkless:
        units.append(chunkless)
    graphs = extraction.extract_batches(([row[3] for row in unit if row[0] is not None] for unit in units),
                                        processes=processes, max_chars=limit)
    totals: Counter = Counter()
    entities: set[int] = set()
    stored: set[int] = set()
    owners: set[int] = set()
    for unit, unit_graphs in zip(units, graphs, strict=True):
        unit_ids = sorted({row[1] for row in unit})
        live = dict(Memory.objects.filter(pk__in=unit_ids).values_list("pk", "owner_id"))
        per_owner: dict[int, list] = {owner_id: [] for owner_id in live.values()}
        for (chunk_id, memory_id, _, _), graph in zip((row for row in unit if row[0] is not None), unit_graphs,
                                                      strict=True):
            if memory_id in live:
                per_owner[live[memory_id]].append((chunk_id, memory_id, graph))
        for owner_id, items in per_owner.items():
            owner_memory_ids = [m for m, o in live.items() if o == owner_id]
            totals.update(_store_owner_graph(owner_id=owner_id, memory_ids=owner_memory_ids, items=items,
                                             entities_seen=entities, only_named=len(units) > 1))
            owners.add(owner_id)
        _mark_extracted({memory_id: hashes[memory_id] for memory_id in live})
        stored.update(live)
    if len(units) > 1:
        # Each unit set exact values on what it changed; the rest of each graph follows once here.
        for owner_id in owners:
            graph_normalise(owner_id=owner_id)
    return {"memories": len(stored), "chunks": len(rows), "mentions": totals["mentions"],
            "entities": len(entities), "entities_created": totals["entities_created"],
            "entities_removed": totals["entities_removed"], "relationships": totals["relationships"],
            "relationships_removed": totals["relationships_removed"], "aliases_merged": totals["aliases_merged"]}


def _mark_extracted(hashes: dict[int, str]) -> None:
    """Note which content each memory's graph now reflects; a memory edited meanwhile stays due."""
    if not hashes:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memory m SET graph_extracted_hash = v.hash "
            "FROM unnest(%s::bigint[], %s::text[]) AS v(id, hash) WHERE m.id = v.id AND m.content_hash = v.hash",
            [list(hashes), list(hashes.values())])


def graph_extraction_due(*, memory_ids: Sequence[int]) -> list[int]:
    """Those of these memories whose graph does not reflect their current content."""
    return list(Memory.objects.filter(pk__in=list(memory_ids)).exclude(graph_extracted_hash=F("content_hash"))
                .order_by("pk").values_list("pk", flat=True))


def _store_owner_graph(*, owner_id: int, memory_ids: list[int], items: list, entities_seen: set[int],
                       only_named: bool = False) -> Counter:
    now = timezone.now()
    counts: Counter = Counter()
    with transaction.atomic():
        _lock_owner_graph(owner_id)
        old_entities = set(EntityMention.objects.filter(memory_id__in=memory_ids)
                           .values_list("entity_id", flat=True).distinct())
        old_relationships = set(RelationshipEvidence.objects.filter(memory_id__in=memory_ids)
                                .values_list("relationship_id", flat=True).distinct())
        EntityMention.objects.filter(memory_id__in=memory_ids).delete()
        RelationshipEvidence.objects.filter(memory_id__in=memory_ids).delete()

        names: dict[str, Counter] = defaultdict(Counter)
        types: dict[str, Counter] = defaultdict(Counter)
        for _, _, graph in items:
            for mention in graph.mentions:
                names[mention.key][mention.name] += 1
                types[mention.key][mention.type] += 1
        entity_ids, created = _entities_resolve(owner_id=owner_id, names=names, types=types, now=now)
        counts["entities_created"] = created

        mentions = []
        for chunk_id, memory_id, graph in items:
            seen: set[tuple[int, int]] = set()
            for m in graph.mentions:
                entity_id = entity_ids[m.key]
                if (m.start, entity_id) in seen:
                    continue
                seen.add((m.start, entity_id))
                mentions.append((owner_id, entity_id, memory_id, chunk_id, m.start, m.end, m.type, m.name[:200]))
        _copy_rows("graph_entitymention", ("owner_id", "entity_id", "memory_id", "chunk_id", "start", "end", "type",
                                           "surface"), mentions)
        counts["mentions"] = len(mentions)

        new_relationships = _relationships_store(owner_id=owner_id, items=items, entity_ids=entity_ids, now=now)
        touched_entities = old_entities | set(entity_ids.values())
        counts["aliases_merged"] = _person_aliases_merge(owner_id=owner_id, entity_ids=touched_entities)
        removed_entities = _entities_recount(entity_ids=touched_entities)
        touched_relationships = old_relationships | new_relationships
        touched_relationships = set(Relationship.objects.filter(pk__in=touched_relationships)
                                    .values_list("pk", flat=True))
        removed_relationships = _relationships_recount(relationship_ids=touched_relationships)
        _owner_graph_normalise(owner_id=owner_id, entity_ids=touched_entities, relationship_ids=touched_relationships,
                               only_named=only_named)
    entities_seen.update(entity_ids.values())
    counts["entities_removed"] = removed_entities
    counts["relationships"] = len(new_relationships)
    counts["relationships_removed"] = removed_relationships
    return counts


def _best_type(votes: Counter) -> str:
    return max(votes.items(), key=lambda item: (item[1] * extraction.TYPE_PRIORITY.get(item[0], 1), item[0]))[0]


def _copy_rows(table: str, columns: Sequence[str], rows: list[tuple]) -> None:
    """Bulk insert with COPY: no model objects and no per-row placeholders, for the thousands of
    mentions and evidence rows one batch writes. Callers have removed the rows they replace."""
    if not rows:
        return
    names = ", ".join(f'"{column}"' for column in columns)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _entities_resolve(*, owner_id: int, names: dict[str, Counter], types: dict[str, Counter],
                      now: datetime) -> tuple[dict[str, int], int]:
    """Map each key to the owner's entity for it (by key or alias), creating the missing ones."""
    keys = list(names)
    if not keys:
        return {}, 0
    resolved: dict[str, int] = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, key FROM graph_entity WHERE owner_id = %s AND key = ANY(%s)", [owner_id, keys])
        resolved.update((key, entity_id) for entity_id, key in cursor.fetchall())
        # The few merged entities (the only ones with aliases) catch the keys folded into them.
        cursor.execute(f"SELECT id, aliases FROM graph_entity WHERE owner_id = %s AND {ALIASED_SQL}", [owner_id])
        wanted = set(keys)
        for entity_id, aliases in cursor.fetchall():
            for alias in wanted.intersection(aliases):
                resolved.setdefault(alias, entity_id)
        missing = [key for key in keys if key not in resolved]
        if missing:
            cursor.execute(
                "INSERT INTO graph_entity (owner_id, key, name, type, aliases, salience, mention_count, memory_count, "
                "first_seen, last_seen) SELECT %(owner)s, v.key, v.name, v.type, '{}', 0, 0, 0, %(now)s, %(now)s "
                "FROM unnest(%(keys)s::varchar[], %(names)s::varchar[], %(types)s::varchar[]) AS v(key, name, type) "
                "ON CONFLICT (owner_id, key) DO NOTHING RETURNING key, id",
                {"owner": owner_id, "now": now, "keys": missing,
                 "names": [names[key].most_common(1)[0][0][:200] for key in missing],
                 "types": [_best_type(types[key]) for key in missing]})
            resolved.update(cursor.fetchall())
    return {key: resolved[key] for key in keys}, len(missing)


def _relationships_store(*, owner_id: int, items: list, entity_ids: dict[str, int], now: datetime) -> set[int]:
    # One evidence row per relationship and chunk: the strongest sentence of that chunk.
    evidence: dict[tuple[int, int, str], dict[int, tuple[float, str, int]]] = defaultdict(dict)
    for chunk_id, memory_id, graph in items:
        for r in graph.relations:
            source, target = entity_ids[r.source_key], entity_ids[r.target_key]
            if source == target:
                continue
            edge = (source, target, r.relation_type)
            if r.confidence > evidence[edge].get(chunk_id, (-1.0,))[0]:
                evidence[edge][chunk_id] = (r.confidence, r.sentence, memory_id)
    if not evidence:
        return set()
    edges = list(evidence)
    with connection.cursor() as cursor:
        # New edges are inserted and known ones only touched, so one statement returns every id.
        cursor.execute(
            "INSERT INTO graph_relationship (owner_id, source_id, target_id, relation_type, weight, confidence, "
            "evidence_count, evidence, created_at, last_seen) "
            "SELECT %(owner)s, v.source, v.target, v.kind, 0, 0, 0, '', %(now)s, %(now)s "
            "FROM unnest(%(sources)s::bigint[], %(targets)s::bigint[], %(kinds)s::varchar[]) "
            "AS v(source, target, kind) "
            "ON CONFLICT (source_id, target_id, relation_type) DO UPDATE SET last_seen = EXCLUDED.last_seen "
            "RETURNING source_id, target_id, relation_type, id",
            {"owner": owner_id, "now": now, "sources": [e[0] for e in edges], "targets": [e[1] for e in edges],
             "kinds": [e[2] for e in edges]})
        ids = {(s, t, kind): pk for s, t, kind, pk in cursor.fetchall()}
    _copy_rows("graph_relationshipevidence",
               ("owner_id", "relationship_id", "memory_id", "chunk_id", "confidence", "sentence", "created_at"),
               [(owner_id, ids[edge], memory_id, chunk_id, confidence, sentence, now)
                for edge, per_chunk in evidence.items()
                for chunk_id, (confidence, sentence, memory_id) in per_chunk.items()])
    return set(ids.values())


def _person_aliases_merge(*, owner_id: int, entity_ids: set[int]) -> int:
    """A lone first or last name ("Alice") becomes an alias of the one full name it can stand for
    ("Alice Smith") in the owner's graph. Ambiguous short names (two Alices) stay separate."""
    persons = list(Entity.objects.filter(owner_id=owner_id, type=EntityType.PERSON).values_list("id", "key"))
    full_names: dict[str, set[int]] = defaultdict(set)
    for pk, key in persons:
        parts = key.split()
        if len(parts) > 1:
            full_names[parts[0]].add(pk)
            full_names[parts[-1]].add(pk)
    merged = 0
    for pk, key in persons:
        if " " in key:
            continue
        candidates = full_names.get(key, set())
        if len(candidates) == 1:
            (target,) = candidates
            if pk in entity_ids or target in entity_ids:
                entity_merge(source_id=pk, target_id=target)
                entity_ids.discard(pk)
                entity_ids.add(target)
                merged += 1
    return merged


def entity_merge(*, source_id: int, target_id: int) -> Entity:
    """Fold one entity into another of the same owner: mentions, edges and keys move, source goes."""
    with transaction.atomic():
        source = Entity.objects.select_for_update().get(pk=source_id)
        target = Entity.objects.select_for_update().get(pk=target_id, owner_id=source.owner_id)
        same_place = EntityMention.objects.filter(entity_id=target_id, chunk_id=OuterRef("chunk_id"),
                                                  start=OuterRef("start"))
        EntityMention.objects.filter(entity_id=source_id).filter(Exists(same_place)).delete()
        EntityMention.objects.filter(entity_id=source_id).update(entity_id=target_id)
        touched: set[int] = set()
        for edge in Relationship.objects.filter(Q(source_id=source_id) | Q(target_id=source_id)):
            new_source = target_id if edge.source_id == source_id else edge.source_id
            new_target = target_id if edge.target_id == source_id else edge.target_id
            if new_source == new_target:
                edge.delete()
                continue
            twin = Relationship.objects.filter(source_id=new_source, target_id=new_target,
                                               relation_type=edge.relation_type).first()
            if twin is None:
                Relationship.objects.filter(pk=edge.pk).update(source_id=new_source, target_id=new_target)
                touched.add(edge.pk)
                continue
            known_chunks = RelationshipEvidence.objects.filter(relationship=twin).values("chunk_id")
            RelationshipEvidence.objects.filter(relationship=edge).exclude(chunk_id__in=known_chunks) \
                .update(relationship=twin)
            edge.delete()
            touched.add(twin.pk)
        target.aliases = sorted({*target.aliases, source.key, *source.aliases} - {target.key})
        target.save(update_fields=["aliases"])
        source.delete()
        _entities_recount(entity_ids={target_id})
        _relationships_recount(relationship_ids=touched)
    return target


def _type_rank_sql() -> str:
    cases = " ".join(f"WHEN '{t}' THEN {rank}" for t, rank in extraction.TYPE_PRIORITY.items())
    return f"(CASE type {cases} ELSE 1 END)"


def _entities_recount(*, entity_ids: Iterable[int]) -> int:
    """Counts, name, type and dates from the mentions, in one statement; entities left without any
    mention are deleted. The display name is the most frequent surface form (capitalised wins ties)
    and the type the most frequent one, weighted towards the specific kinds."""
    ids = sorted(set(entity_ids))
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH stats AS (
                SELECT m.entity_id, count(*) AS mentions, count(DISTINCT m.memory_id) AS memories,
                       min(mem.created_at) AS first_seen, max(mem.updated_at) AS last_seen
                  FROM graph_entitymention m JOIN memories_memory mem ON mem.id = m.memory_id
                 WHERE m.entity_id = ANY(%(ids)s) GROUP BY m.entity_id
            ), names AS (
                SELECT DISTINCT ON (entity_id) entity_id, surface
                  FROM (SELECT entity_id, surface, count(*) AS n FROM graph_entitymention
                         WHERE entity_id = ANY(%(ids)s) GROUP BY entity_id, surface) x
                 ORDER BY entity_id, n DESC, (surface ~ '^[[:upper:]]') DESC, surface
            ), types AS (
                SELECT DISTINCT ON (entity_id) entity_id, type
                  FROM (SELECT entity_id, type, count(*) AS n FROM graph_entitymention
                         WHERE entity_id = ANY(%(ids)s) GROUP BY entity_id, type) x
                 ORDER BY entity_id, n * {_type_rank_sql()} DESC, type DESC
            )
            UPDATE graph_entity e
               SET mention_count = s.mentions, memory_count = s.memories, first_seen = s.first_seen,
                   last_seen = s.last_seen, name = names.surface, type = types.type
              FROM stats s JOIN names USING (entity_id) JOIN types USING (entity_id)
             WHERE e.id = s.entity_id
            """, {"ids": ids})
    gone = Entity.objects.filter(pk__in=ids).exclude(Exists(EntityMention.objects.filter(entity_id=OuterRef("pk"))))
    return gone.delete()[1].get("graph.Entity", 0)


def _relationships_recount(*, relationship_ids: Iterable[int]) -> int:
    """Evidence count, confidence, context chunk and sentence from the evidence rows, in one
    statement; a relationship left without evidence is deleted."""
    ids = sorted(set(relationship_ids))
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH stats AS (
                SELECT relationship_id, count(*) AS n, max(confidence) AS confidence, max(created_at) AS last_seen
                  FROM graph_relationshipevidence WHERE relationship_id = ANY(%(ids)s) GROUP BY relationship_id
            ), best AS (
                SELECT DISTINCT ON (relationship_id) relationship_id, chunk_id, sentence
                  FROM graph_relationshipevidence WHERE relationship_id = ANY(%(ids)s)
                 ORDER BY relationship_id, confidence DESC, id DESC
            )
            UPDATE graph_relationship r
               SET evidence_count = s.n, confidence = s.confidence, last_seen = s.last_seen,
                   context_chunk_id = b.chunk_id, evidence = b.sentence
              FROM stats s JOIN best b USING (relationship_id)
             WHERE r.id = s.relationship_id
            """, {"ids": ids})
    gone = Relationship.objects.filter(pk__in=ids).exclude(
        Exists(RelationshipEvidence.objects.filter(relationship_id=OuterRef("pk"))))
    return gone.delete()[1].get("graph.Relationship", 0)


# Renormalising rewrites only the rows whose value moves by more than this (and always the rows
# just recounted): when the owner's maximum grows, the thousands of rarely-mentioned entities shift
# by less than a rounding error, and rewriting every row of a large graph per batch is the cost.
NORMALISE_TOLERANCE = 0.005


def _owner_graph_normalise(*, owner_id: int, entity_ids: Iterable[int] = (), relationship_ids: Iterable[int] = (),
                           only_named: bool = False) -> None:
    """Salience and weight are relative to the owner's whole graph, so both are renormalised in SQL.

    salience = 0.6 · ln(1+memories)/ln(1+max memories) + 0.4 · ln(1+mentions)/ln(1+max mentions)
    weight   = ln(1+evidence)/ln(1+max evidence)

    The entities and relationships named (the ones whose counts just changed) get the exact value;
    every other row is rewritten only when it is off by more than NORMALISE_TOLERANCE, and not at all
    with `only_named` (a caller writing several units renormalises the rest once, at the end).
    """
    salience = ("LEAST(1.0, 0.6 * ln(1 + e.memory_count) / ln(1 + m.max_memories)"
                " + 0.4 * ln(1 + e.mention_count) / ln(1 + m.max_mentions))")
    weight = "LEAST(1.0, ln(1 + r.evidence_count) / ln(1 + m.max_evidence))"
    params = {"owner": owner_id, "entities": sorted(set(entity_ids)), "relationships": sorted(set(relationship_ids)),
              "tolerance": NORMALISE_TOLERANCE}
    others = "AND false" if only_named else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE graph_entity e SET salience = {salience}
              FROM (SELECT GREATEST(max(memory_count), 1) AS max_memories,
                           GREATEST(max(mention_count), 1) AS max_mentions
                      FROM graph_entity WHERE owner_id = %(owner)s) m
             WHERE e.owner_id = %(owner)s
               AND ((abs(e.salience - {salience}) > %(tolerance)s {others})
                    OR (e.id = ANY(%(entities)s) AND e.salience IS DISTINCT FROM {salience}))
            """, params)
        cursor.execute(
            f"""
            UPDATE graph_relationship r SET weight = {weight}
              FROM (SELECT GREATEST(max(evidence_count), 1) AS max_evidence
                      FROM graph_relationship WHERE owner_id = %(owner)s) m
             WHERE r.owner_id = %(owner)s
               AND ((abs(r.weight - {weight}) > %(tolerance)s {others})
                    OR (r.id = ANY(%(relationships)s) AND r.weight IS DISTINCT FROM {weight}))
            """, params)


def graph_normalise(*, owner_id: int) -> None:
    """Renormalise the owner's salience and weights (within NORMALISE_TOLERANCE)."""
    with transaction.atomic():
        _lock_owner_graph(owner_id)
        _owner_graph_normalise(owner_id=owner_id)


def graph_forget_memory(*, memory: Memory) -> tuple[set[int], set[int]]:
    """What a memory's deletion will touch: the entities it mentions and the edges it evidences."""
    entities = set(EntityMention.objects.filter(memory_id=memory.pk).values_list("entity_id", flat=True).distinct())
    edges = set(RelationshipEvidence.objects.filter(memory_id=memory.pk)
                .values_list("relationship_id", flat=True).distinct())
    return entities, edges


def graph_recount(*, owner_id: int, entity_ids: set[int], relationship_ids: set[int]) -> None:
    """Recount after rows went away (a deleted memory): orphans are deleted, the rest renormalised."""
    if not entity_ids and not relationship_ids:
        return
    with transaction.atomic():
        _lock_owner_graph(owner_id)
        entity_ids = set(Entity.objects.filter(pk__in=entity_ids).values_list("pk", flat=True))
        relationship_ids = set(Relationship.objects.filter(pk__in=relationship_ids).values_list("pk", flat=True))
        _entities_recount(entity_ids=entity_ids)
        _relationships_recount(relationship_ids=relationship_ids)
        _owner_graph_normalise(owner_id=owner_id, entity_ids=entity_ids, relationship_ids=relationship_ids)


def graph_rebuild(*, owner, batch_size: int = 200) -> dict:
    """Re-extract every memory of one owner, in batches; returns summed counts."""
    ids = list(Memory.objects.filter(owner=owner).order_by("pk").values_list("pk", flat=True))
    totals: Counter = Counter()
    for start in range(0, len(ids), batch_size):
        totals.update(graph_extract_memories(memory_ids=ids[start:start + batch_size]))
    links = memory_links_refresh(owner=owner)
    return {**dict(totals), "memories": len(ids), "links": links}


# --- Memory links -----------------------------------------------------------------------------------


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
    now = timezone.now()
    with transaction.atomic():
        _lock_owner_graph(owner_id)
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
