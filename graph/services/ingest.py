"""Extraction into the graph: entities, mentions and relationships from memories' chunks, and the
record of which content each memory's graph reflects."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core import workers
from core.retry import run_with_retry
from graph import extraction as extractor
from graph.extraction.citations import cited_authors
from graph.extraction.documents import MAX_ENTITIES_PER_DOCUMENT, mask_running_lines, salient_keys
from graph.models import ALIASED_SQL, EntityMention, MemoryExtraction, Relationship, RelationshipEvidence
from graph.services.links import memory_links_refresh
from graph.services.sql import copy_rows, lock_owner_graph
from graph.services.upkeep import (
    entities_recount,
    graph_normalise,
    owner_graph_normalise,
    person_aliases_merge,
    relationships_recount,
)
from graph.vocabulary import EXTRACTION_RULES_VERSION, TYPE_PRIORITY
from memories import embedding
from memories.models import Memory, MemoryChunk

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
    memories = list(Memory.objects.filter(pk__in=ids).values_list("pk", "content_hash", "owner_id", "title"))
    hashes = {pk: content_hash for pk, content_hash, *_ in memories}
    rows = list(
        # Owner first: the chunks of a split (partitioned, distributed) table are found by owner.
        MemoryChunk.objects.filter(owner_id__in={owner_id for _, _, owner_id, _ in memories}, memory_id__in=ids)
        .order_by("memory_id", "position")
        .values_list("id", "memory_id", "owner_id", "text")
    )
    limit = settings.KYBERNESIS_GRAPH_MAX_CHUNK_CHARS
    processes = workers.processes()
    # Small calls still give every worker a share: at least two units per worker when the text allows.
    unit_chars = max(
        4_000, min(EXTRACT_UNIT_CHARS, sum(min(len(row[3]), limit) for row in rows) // (2 * processes) + 1)
    )
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
    titles = {pk: title for pk, _, _, title in memories}
    prefixes = {
        row[0]: prefix
        for index, row in enumerate(rows)
        if (index == 0 or rows[index - 1][1] != row[1]) and (prefix := title_prefix(titles.get(row[1], ""), row[3]))
    }
    graphs = extractor.extract_batches(
        (_unit_texts(unit, prefixes) for unit in units), processes=processes, max_chars=limit
    )
    totals: Counter = Counter()
    entities: set[int] = set()
    stored: set[int] = set()
    owners: set[int] = set()
    for unit, unit_graphs in zip(units, graphs, strict=True):
        unit_ids = sorted({row[1] for row in unit})
        live = dict(Memory.objects.filter(pk__in=unit_ids).values_list("pk", "owner_id"))
        per_owner: dict[int, list] = {owner_id: [] for owner_id in live.values()}
        authors = _cited_authors(unit)
        for (chunk_id, memory_id, _, _), graph in zip(
            (row for row in unit if row[0] is not None), unit_graphs, strict=True
        ):
            if memory_id in live:
                if chunk_id in prefixes:
                    graph = _without_prefix(graph, len(prefixes[chunk_id]))
                extractor.with_cited_authors(graph, authors.get(memory_id, frozenset()))
                per_owner[live[memory_id]].append((chunk_id, memory_id, graph))
        for owner_id, items in per_owner.items():
            owner_memory_ids = [m for m, o in live.items() if o == owner_id]
            counts, written = run_with_retry(
                partial(
                    _store_owner_graph,
                    owner_id=owner_id,
                    memory_ids=owner_memory_ids,
                    items=items,
                    hashes=hashes,
                    entities_seen=entities,
                    only_named=len(units) > 1,
                ),
                vanished=True,
                label="graph store",
            )
            totals.update(counts)
            owners.add(owner_id)
            run_with_retry(
                partial(_mark_extracted, {memory_id: hashes[memory_id] for memory_id in written}),
                vanished=True,
                label="graph mark extracted",
            )
            stored.update(written)
    if len(units) > 1:
        # Each unit set exact values on what it changed; the rest of each graph follows once here.
        for owner_id in owners:
            graph_normalise(owner_id=owner_id)
    return {
        "memories": len(stored),
        "chunks": len(rows),
        "mentions": totals["mentions"],
        "entities": len(entities),
        "entities_created": totals["entities_created"],
        "entities_removed": totals["entities_removed"],
        "relationships": totals["relationships"],
        "relationships_removed": totals["relationships_removed"],
        "aliases_merged": totals["aliases_merged"],
    }


def title_prefix(title: str, text: str) -> str:
    """What extraction reads before a memory's first chunk: its title, as a paragraph of its own, when
    the text does not open with it ("Riverside Rovers under-12s: spring fixtures" names the club the
    note never names again). "" when the text opens with the title (an upload titled by its heading,
    a chat message by its first words)."""
    title = " ".join((title or "").split())
    if not title or embedding.opens_with_title(title, text):
        return ""
    # A colon in a title parts a name from what it is about ("Riverside Rovers: spring fixtures"),
    # where at the start of a line it would read as a form's label ("Amount Due:"). A full stop ends
    # it as a sentence of its own, which the model would otherwise run into the text's first one.
    title = title.replace(":", " –")
    return title + ("" if title[-1] in ".!?…" else ".") + "\n\n"


def _without_prefix(graph, length: int):
    """A chunk's graph read with a title before it, its mentions placed in the chunk's own text: one
    in the text moves back by the prefix's length, and one in the title is kept on the chunk's first
    character (the memory names it; a mention spans at least one character)."""
    mentions = [
        replace(m, start=m.start - length, end=m.end - length) if m.start >= length else replace(m, start=0, end=1)
        for m in graph.mentions
    ]
    return extractor.ChunkGraph(mentions=mentions, relations=graph.relations)


def _cited_authors(unit: list[tuple]) -> dict[int, frozenset[str]]:
    """The authors each memory of a unit cites, read over all its chunks (graph.extraction.citations)."""
    texts: dict[int, list[str]] = {}
    for chunk_id, memory_id, _, text in unit:
        if chunk_id is not None:
            texts.setdefault(memory_id, []).append(text)
    return {memory_id: cited_authors("\n".join(chunks)) for memory_id, chunks in texts.items()}


def _unit_texts(unit: list[tuple], prefixes: dict[int, str]) -> list[str]:
    """The texts of a unit's chunks as extraction reads them: each memory's running headers and footers
    blanked (a unit holds whole memories, in chunk order), and its title before its first chunk
    when the text does not open with it (title_prefix)."""
    texts: list[str] = []
    memory_chunks: list[str] = []
    chunk_ids: list[int] = []
    for index, (chunk_id, memory_id, _, text) in enumerate(unit):
        if chunk_id is None:
            continue
        memory_chunks.append(text)
        chunk_ids.append(chunk_id)
        following = unit[index + 1] if index + 1 < len(unit) else None
        if following is None or following[1] != memory_id or following[0] is None:
            masked = mask_running_lines(memory_chunks)
            texts.extend(prefixes.get(cid, "") + chunk for cid, chunk in zip(chunk_ids, masked, strict=True))
            memory_chunks, chunk_ids = [], []
    return texts


def _mark_extracted(hashes: dict[int, str]) -> None:
    """Note which content each memory's graph now reflects; a memory edited meanwhile stays due."""
    if not hashes:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO graph_memoryextraction (memory_id, content_hash, extracted_at, rules_version) "
            "SELECT m.id, v.hash, now(), %s FROM unnest(%s::bigint[], %s::text[]) AS v(id, hash) "
            "JOIN memories_memory m ON m.id = v.id AND m.content_hash = v.hash "
            "ON CONFLICT (memory_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, "
            "extracted_at = EXCLUDED.extracted_at, rules_version = EXCLUDED.rules_version",
            [EXTRACTION_RULES_VERSION, list(hashes), list(hashes.values())],
        )


def graph_extraction_due(*, memory_ids: Sequence[int]) -> list[int]:
    """Those of these memories whose graph does not reflect their current content read by the
    current rules."""
    current = MemoryExtraction.objects.filter(
        memory_id=OuterRef("pk"), content_hash=OuterRef("content_hash"), rules_version=EXTRACTION_RULES_VERSION
    )
    return list(
        Memory.objects.filter(pk__in=list(memory_ids))
        .exclude(Exists(current))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _lock_unchanged_memories(memory_ids: list[int], hashes: dict[int, str]) -> set[int]:
    """Lock the memories' rows (in id order, the first lock of every memory writer) against edits and
    deletes until the transaction ends, and return those that still hold the content that was extracted.
    A memory deleted, trashed or edited since is skipped: its mentions went with it, or its edit queued a
    new extraction (a restore from the trash queues one too). FOR KEY SHARE is the lock the mention rows' foreign keys take anyway; it waits for an
    edit's or a delete's row lock and lets pins and tier moves through."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, content_hash FROM memories_memory WHERE id = ANY(%s) AND trashed_at IS NULL "
            "ORDER BY id FOR KEY SHARE",
            [sorted(memory_ids)],
        )
        return {memory_id for memory_id, digest in cursor.fetchall() if hashes.get(memory_id) == digest}


def _store_owner_graph(
    *,
    owner_id: int,
    memory_ids: list[int],
    items: list,
    hashes: dict[int, str],
    entities_seen: set[int],
    only_named: bool = False,
) -> tuple[Counter, set[int]]:
    """One transaction: the memory rows first, then the owner's graph lock, then the graph rows."""
    now = timezone.now()
    counts: Counter = Counter()
    with transaction.atomic():
        unchanged = _lock_unchanged_memories(memory_ids, hashes)
        # Chunks of an unchanged memory are those that were read, unless its content went A -> B -> A.
        chunk_ids = {chunk_id for chunk_id, memory_id, _ in items if memory_id in unchanged}
        existing = set(MemoryChunk.objects.filter(owner_id=owner_id, pk__in=chunk_ids).values_list("pk", flat=True))
        unchanged -= {memory_id for chunk_id, memory_id, _ in items if chunk_id not in existing}
        memory_ids = sorted(unchanged)
        items = [item for item in items if item[1] in unchanged]
        if not memory_ids:
            return counts, set()
        lock_owner_graph(owner_id)
        old_entities = set(
            EntityMention.objects.filter(memory_id__in=memory_ids).values_list("entity_id", flat=True).distinct()
        )
        old_relationships = set(
            RelationshipEvidence.objects.filter(memory_id__in=memory_ids)
            .values_list("relationship_id", flat=True)
            .distinct()
        )
        EntityMention.objects.filter(memory_id__in=memory_ids).delete()
        RelationshipEvidence.objects.filter(memory_id__in=memory_ids).delete()

        items = _salient_only(owner_id=owner_id, items=items)
        names: dict[str, Counter] = defaultdict(Counter)
        types: dict[str, Counter] = defaultdict(Counter)
        for _, _, graph in items:
            for mention in graph.mentions:
                names[mention.key][mention.name] += 1
                types[mention.key][mention.type] += 1
        entity_ids, created = _entities_resolve(owner_id=owner_id, names=names, types=types, now=now)
        counts["entities_created"] = created
        _surface_aliases_add(items=items, entity_ids=entity_ids)

        mentions = []
        for chunk_id, memory_id, graph in items:
            seen: set[tuple[int, int]] = set()
            for m in graph.mentions:
                entity_id = entity_ids[m.key]
                if (m.start, entity_id) in seen:
                    continue
                seen.add((m.start, entity_id))
                mentions.append((owner_id, entity_id, memory_id, chunk_id, m.start, m.end, m.type, m.name[:200]))
        copy_rows(
            "graph_entitymention",
            ("owner_id", "entity_id", "memory_id", "chunk_id", "start", "end", "type", "surface"),
            mentions,
        )
        counts["mentions"] = len(mentions)

        new_relationships = _relationships_store(owner_id=owner_id, items=items, entity_ids=entity_ids, now=now)
        touched_entities = old_entities | set(entity_ids.values())
        counts["aliases_merged"] = person_aliases_merge(owner_id=owner_id, entity_ids=touched_entities)
        removed_entities = entities_recount(entity_ids=touched_entities)
        touched_relationships = old_relationships | new_relationships
        touched_relationships = set(
            Relationship.objects.filter(pk__in=touched_relationships).values_list("pk", flat=True)
        )
        removed_relationships = relationships_recount(relationship_ids=touched_relationships)
        owner_graph_normalise(
            owner_id=owner_id,
            entity_ids=touched_entities,
            relationship_ids=touched_relationships,
            only_named=only_named,
        )
    entities_seen.update(entity_ids.values())
    counts["entities_removed"] = removed_entities
    counts["relationships"] = len(new_relationships)
    counts["relationships_removed"] = removed_relationships
    return counts, set(memory_ids)


def _salient_only(*, owner_id: int, items: list) -> list:
    """Each memory's mentions and relations limited to the entities it keeps: at most
    MAX_ENTITIES_PER_DOCUMENT, the names the account already knows first (graph.extraction.documents)."""
    mentions: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for _, memory_id, graph in items:
        mentions[memory_id].extend((m.key, m.type) for m in graph.mentions)
    crowded = {
        memory_id: found
        for memory_id, found in mentions.items()
        if len({key for key, _ in found}) > MAX_ENTITIES_PER_DOCUMENT
    }
    if not crowded:
        return items
    known = _known_keys(owner_id=owner_id, keys={key for found in crowded.values() for key, _ in found})
    kept = {memory_id: salient_keys(found, known=known) for memory_id, found in crowded.items()}
    bounded = []
    for chunk_id, memory_id, graph in items:
        keys = kept.get(memory_id)
        if keys is not None:
            graph = extractor.ChunkGraph(
                mentions=[m for m in graph.mentions if m.key in keys],
                relations=[r for r in graph.relations if r.source_key in keys and r.target_key in keys],
            )
        bounded.append((chunk_id, memory_id, graph))
    return bounded


def _known_keys(*, owner_id: int, keys: set[str]) -> set[str]:
    """Those of these keys the owner's graph already has, as an entity's key or one of its aliases."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT key FROM graph_entity WHERE owner_id = %s AND key = ANY(%s)", [owner_id, list(keys)])
        known = {key for (key,) in cursor.fetchall()}
        cursor.execute(f"SELECT aliases FROM graph_entity WHERE owner_id = %s AND {ALIASED_SQL}", [owner_id])
        for (aliases,) in cursor.fetchall():
            known.update(keys.intersection(aliases))
    return known


def _surface_aliases_add(*, items: list, entity_ids: dict[str, int]) -> None:
    """A name filed under another key keeps its own key as an alias, so it finds the entity later:
    "Intensive Treatment Unit", defined in the text as ITU, is an alias of ITU."""
    extra: dict[int, set[str]] = defaultdict(set)
    for _, _, graph in items:
        for mention in graph.mentions:
            own = extractor.canonical_key(mention.name, mention.type)
            if own and own != mention.key:
                extra[entity_ids[mention.key]].add(own[:200])
    if not extra:
        return
    with connection.cursor() as cursor:
        for entity_id, keys in extra.items():
            cursor.execute(
                "UPDATE graph_entity SET aliases = ARRAY(SELECT DISTINCT a FROM unnest(aliases || %s::varchar[]) a "
                "WHERE a <> key ORDER BY a) WHERE id = %s AND NOT (aliases @> %s::varchar[])",
                [sorted(keys), entity_id, sorted(keys)],
            )


def _best_type(votes: Counter) -> str:
    return max(votes.items(), key=lambda item: (item[1], TYPE_PRIORITY.get(item[0], 1), item[0]))[0]


def _entities_resolve(
    *, owner_id: int, names: dict[str, Counter], types: dict[str, Counter], now: datetime
) -> tuple[dict[str, int], int]:
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
                {
                    "owner": owner_id,
                    "now": now,
                    "keys": missing,
                    "names": [names[key].most_common(1)[0][0][:200] for key in missing],
                    "types": [_best_type(types[key]) for key in missing],
                },
            )
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
            {
                "owner": owner_id,
                "now": now,
                "sources": [e[0] for e in edges],
                "targets": [e[1] for e in edges],
                "kinds": [e[2] for e in edges],
            },
        )
        ids = {(s, t, kind): pk for s, t, kind, pk in cursor.fetchall()}
    copy_rows(
        "graph_relationshipevidence",
        ("owner_id", "relationship_id", "memory_id", "chunk_id", "confidence", "sentence", "created_at"),
        [
            (owner_id, ids[edge], memory_id, chunk_id, confidence, sentence, now)
            for edge, per_chunk in evidence.items()
            for chunk_id, (confidence, sentence, memory_id) in per_chunk.items()
        ],
    )
    return set(ids.values())


def graph_rebuild(*, owner, batch_size: int = 200) -> dict:
    """Re-extract every memory of one owner, in batches; returns summed counts."""
    ids = list(Memory.objects.filter(owner=owner).order_by("pk").values_list("pk", flat=True))
    totals: Counter = Counter()
    for start in range(0, len(ids), batch_size):
        totals.update(graph_extract_memories(memory_ids=ids[start : start + batch_size]))
    links = memory_links_refresh(owner=owner)
    return {**dict(totals), "memories": len(ids), "links": links}


def graph_ingest_memories(*, memory_ids: Sequence[int]) -> dict:
    """Extract the graph of new or changed memories, then refresh their links, owner by owner. A
    conflict with a concurrent edit or delete (a deadlock, a row gone under a foreign key) runs the
    idempotent extraction again."""
    result = run_with_retry(
        lambda: graph_extract_memories(memory_ids=memory_ids), vanished=True, attempts=3, label="graph extract task"
    )
    owners: dict[int, list[int]] = {}
    for memory_id, owner_id in Memory.objects.filter(pk__in=memory_ids).values_list("pk", "owner_id"):
        owners.setdefault(owner_id, []).append(memory_id)
    result["links"] = {
        owner_id: memory_links_refresh(owner=owner_id, memory_ids=ids) for owner_id, ids in owners.items()
    }
    return result
