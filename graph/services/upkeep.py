"""Graph upkeep: recounts, salience and weight normalisation, entity merges, and cleanup after a
memory is deleted."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q

from graph.extraction.lexicon import english_words
from graph.models import Entity, EntityMention, EntityType, MemoryExtraction, Relationship, RelationshipEvidence
from graph.services.sql import lock_owner_graph
from graph.vocabulary import TYPE_PRIORITY
from memories.models import Memory

# Lone names the rules may have typed otherwise ("Kahneman argues" as a concept) that can still be the
# given or family name of a person the account names in full.
_LONE_NAME_TYPES = (EntityType.PERSON, EntityType.CONCEPT, EntityType.ORGANIZATION, EntityType.PRODUCT)


def person_aliases_merge(*, owner_id: int, entity_ids: set[int]) -> int:
    """A lone given or family name ("Priya", "Kahneman"), or initials and a family name ("P. Marcel"),
    becomes an alias of the one full name it can stand for ("Priya Nair", "Daniel Kahneman", "Patrick
    Marcel") in the owner's graph, and its mentions become the person's. Ambiguous short names (two
    Priyas) stay separate. A lone name typed other than person merges only when it is capitalised and
    no English word: "Wood" the concept is not "Jack Wood"."""
    rows = list(
        Entity.objects.filter(owner_id=owner_id, type__in=_LONE_NAME_TYPES).values_list("id", "key", "name", "type")
    )
    full_names: dict[str, set[int]] = defaultdict(set)
    by_pk = {pk: key for pk, key, _, _ in rows}
    for pk, key, _, entity_type in rows:
        parts = key.split()
        if len(parts) > 1 and entity_type == EntityType.PERSON:
            full_names[parts[0]].add(pk)
            full_names[parts[-1]].add(pk)
    initialled: dict[int, set[int]] = {}
    for pk, key, _, entity_type in rows:
        parts = key.split()
        # "P. Marcel" (key "p marcel") stands for the one full name whose given name starts with P.
        if entity_type == EntityType.PERSON and len(parts) >= 2 and all(len(p) == 1 for p in parts[:-1]):
            initialled[pk] = {
                target
                for target in full_names.get(parts[-1], set())
                if target != pk and by_pk[target].split()[0][:1] == parts[0] and len(by_pk[target].split()[0]) > 1
            }
    merged = 0
    for pk, key, name, entity_type in rows:
        if pk in initialled:
            candidates = initialled[pk]
        elif " " in key or key not in full_names:
            continue
        elif entity_type == EntityType.PERSON or (name[:1].isupper() and key not in english_words()):
            candidates = full_names[key]
        else:
            continue
        if len(candidates) == 1:
            (target,) = candidates
            if pk in entity_ids or target in entity_ids:
                EntityMention.objects.filter(entity_id=pk).exclude(type=EntityType.PERSON).update(
                    type=EntityType.PERSON
                )
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
        same_place = EntityMention.objects.filter(
            entity_id=target_id, chunk_id=OuterRef("chunk_id"), start=OuterRef("start")
        )
        EntityMention.objects.filter(entity_id=source_id).filter(Exists(same_place)).delete()
        EntityMention.objects.filter(entity_id=source_id).update(entity_id=target_id)
        touched: set[int] = set()
        for edge in Relationship.objects.filter(Q(source_id=source_id) | Q(target_id=source_id)):
            new_source = target_id if edge.source_id == source_id else edge.source_id
            new_target = target_id if edge.target_id == source_id else edge.target_id
            if new_source == new_target:
                edge.delete()
                continue
            twin = Relationship.objects.filter(
                source_id=new_source, target_id=new_target, relation_type=edge.relation_type
            ).first()
            if twin is None:
                Relationship.objects.filter(pk=edge.pk).update(source_id=new_source, target_id=new_target)
                touched.add(edge.pk)
                continue
            known_chunks = RelationshipEvidence.objects.filter(relationship=twin).values("chunk_id")
            RelationshipEvidence.objects.filter(relationship=edge).exclude(chunk_id__in=known_chunks).update(
                relationship=twin
            )
            edge.delete()
            touched.add(twin.pk)
        target.aliases = sorted({*target.aliases, source.key, *source.aliases} - {target.key})
        target.save(update_fields=["aliases"])
        source.delete()
        entities_recount(entity_ids={target_id})
        relationships_recount(relationship_ids=touched)
    return target


def _type_rank_sql() -> str:
    cases = " ".join(f"WHEN '{t}' THEN {rank}" for t, rank in TYPE_PRIORITY.items())
    return f"(CASE type {cases} ELSE 1 END)"


def entities_recount(*, entity_ids: Iterable[int]) -> int:
    """Counts, name, type and dates from the mentions, in one statement; entities left without any
    mention are deleted. The display name is the most frequent surface form (capitalised, then the
    longer, wins ties: "Megan Doyle" over the "Megan" merged into it)
    and the type the one most of its mentions in the owner's collection have (the more specific kind
    wins a tie): one sentence's guess does not outvote the rest."""
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
                 ORDER BY entity_id, n DESC, (surface ~ '^[[:upper:]]') DESC, length(surface) DESC, surface
            ), types AS (
                SELECT DISTINCT ON (entity_id) entity_id, type
                  FROM (SELECT entity_id, type, count(*) AS n FROM graph_entitymention
                         WHERE entity_id = ANY(%(ids)s) GROUP BY entity_id, type) x
                 ORDER BY entity_id, n DESC, {_type_rank_sql()} DESC, type DESC
            )
            UPDATE graph_entity e
               SET mention_count = s.mentions, memory_count = s.memories, first_seen = s.first_seen,
                   last_seen = s.last_seen, name = names.surface, type = types.type
              FROM stats s JOIN names USING (entity_id) JOIN types USING (entity_id)
             WHERE e.id = s.entity_id
            """,
            {"ids": ids},
        )
    gone = Entity.objects.filter(pk__in=ids).exclude(Exists(EntityMention.objects.filter(entity_id=OuterRef("pk"))))
    return gone.delete()[1].get("graph.Entity", 0)


def relationships_recount(*, relationship_ids: Iterable[int]) -> int:
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
            """,
            {"ids": ids},
        )
    gone = Relationship.objects.filter(pk__in=ids).exclude(
        Exists(RelationshipEvidence.objects.filter(relationship_id=OuterRef("pk")))
    )
    return gone.delete()[1].get("graph.Relationship", 0)


# Renormalising rewrites only the rows whose value moves by more than this (and always the rows
# just recounted): when the owner's maximum grows, the thousands of rarely-mentioned entities shift
# by less than a rounding error, and rewriting every row of a large graph per batch is the cost.
NORMALISE_TOLERANCE = 0.005
# The mentions of one memory that count towards an entity's salience.
MENTIONS_PER_MEMORY = 3


def owner_graph_normalise(
    *, owner_id: int, entity_ids: Iterable[int] = (), relationship_ids: Iterable[int] = (), only_named: bool = False
) -> None:
    """Salience and weight are relative to the owner's whole graph, so both are renormalised in SQL.

    salience = 0.6 · ln(1+memories)/ln(1+max memories) + 0.4 · ln(1+mentions')/ln(1+max mentions')
    weight   = ln(1+evidence)/ln(1+max evidence)

    where mentions' counts at most MENTIONS_PER_MEMORY mentions per memory: how many memories name
    an entity says how prominent it is, and one long document repeating a word ("MD" on every page)
    does not make it so.

    The entities and relationships named (the ones whose counts just changed) get the exact value;
    every other row is rewritten only when it is off by more than NORMALISE_TOLERANCE, and not at all
    with `only_named` (a caller writing several units renormalises the rest once, at the end).
    """
    salience = (
        "LEAST(1.0, 0.6 * ln(1 + e.memory_count) / ln(1 + m.max_memories)"
        f" + 0.4 * ln(1 + LEAST(e.mention_count, {MENTIONS_PER_MEMORY} * e.memory_count)) / ln(1 + m.max_mentions))"
    )
    weight = "LEAST(1.0, ln(1 + r.evidence_count) / ln(1 + m.max_evidence))"
    params: dict[str, int | float | list[int]] = {
        "owner": owner_id,
        "entities": sorted(set(entity_ids)),
        "relationships": sorted(set(relationship_ids)),
        "tolerance": NORMALISE_TOLERANCE,
    }
    others = "AND false" if only_named else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE graph_entity e SET salience = {salience}
              FROM (SELECT GREATEST(max(memory_count), 1) AS max_memories,
                           GREATEST(max(LEAST(mention_count, {MENTIONS_PER_MEMORY} * memory_count)), 1)
                               AS max_mentions
                      FROM graph_entity WHERE owner_id = %(owner)s) m
             WHERE e.owner_id = %(owner)s
               AND ((abs(e.salience - {salience}) > %(tolerance)s {others})
                    OR (e.id = ANY(%(entities)s) AND e.salience IS DISTINCT FROM {salience}))
            """,
            params,
        )
        cursor.execute(
            f"""
            UPDATE graph_relationship r SET weight = {weight}
              FROM (SELECT GREATEST(max(evidence_count), 1) AS max_evidence
                      FROM graph_relationship WHERE owner_id = %(owner)s) m
             WHERE r.owner_id = %(owner)s
               AND ((abs(r.weight - {weight}) > %(tolerance)s {others})
                    OR (r.id = ANY(%(relationships)s) AND r.weight IS DISTINCT FROM {weight}))
            """,
            params,
        )


def graph_normalise(*, owner_id: int) -> None:
    """Renormalise the owner's salience and weights (within NORMALISE_TOLERANCE)."""
    with transaction.atomic():
        lock_owner_graph(owner_id)
        owner_graph_normalise(owner_id=owner_id)


def graph_forget_memory(*, memory: Memory) -> tuple[set[int], set[int]]:
    """What a memory's deletion will touch: the entities it mentions and the edges it evidences."""
    entities = set(EntityMention.objects.filter(memory_id=memory.pk).values_list("entity_id", flat=True).distinct())
    edges = set(
        RelationshipEvidence.objects.filter(memory_id=memory.pk).values_list("relationship_id", flat=True).distinct()
    )
    return entities, edges


def graph_recount(*, owner_id: int, entity_ids: set[int], relationship_ids: set[int]) -> None:
    """Recount after rows went away (a deleted memory): orphans are deleted, the rest renormalised."""
    if not entity_ids and not relationship_ids:
        return
    with transaction.atomic():
        lock_owner_graph(owner_id)
        entity_ids = set(Entity.objects.filter(pk__in=entity_ids).values_list("pk", flat=True))
        relationship_ids = set(Relationship.objects.filter(pk__in=relationship_ids).values_list("pk", flat=True))
        entities_recount(entity_ids=entity_ids)
        relationships_recount(relationship_ids=relationship_ids)
        owner_graph_normalise(owner_id=owner_id, entity_ids=entity_ids, relationship_ids=relationship_ids)


def graph_forget_trashed(*, owner_id: int, memory_ids: list[int]) -> None:
    """Take trashed memories out of the graph, inside the transaction that trashes them: their mentions
    and evidence go, entities and relationships evidenced only by them go with them, the rest are
    recounted. Their memory links stay (the selectors and the link refresh leave them out while the
    memory is trashed); a restore extracts the memories again (no MemoryExtraction row says otherwise)."""
    if not memory_ids:
        return
    lock_owner_graph(owner_id)
    entities = set(EntityMention.objects.filter(memory_id__in=memory_ids).values_list("entity_id", flat=True))
    edges = set(RelationshipEvidence.objects.filter(memory_id__in=memory_ids).values_list("relationship_id", flat=True))
    EntityMention.objects.filter(memory_id__in=memory_ids).delete()
    RelationshipEvidence.objects.filter(memory_id__in=memory_ids).delete()
    MemoryExtraction.objects.filter(memory_id__in=memory_ids).delete()
    graph_recount(owner_id=owner_id, entity_ids=entities, relationship_ids=edges)
