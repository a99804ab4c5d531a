"""Reads of the knowledge graph: owner-scoped entity lists, one entity in context, graph views."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
from django.db import connection
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import Substr
from django.shortcuts import get_object_or_404

from graph.extraction import canonical_key
from graph.models import Entity, EntityMention, EntityType, MemoryLink, Relationship
from memories.auto_tags import structural_auto_tags
from memories.models import Memory
from memories.tag_rules import filter_tags

MAX_GRAPH_NODES = 2000
SNIPPET_CHARS = 240


class GraphQueryError(ValueError):
    """A graph query that cannot be answered as asked; front doors answer 422 with the message."""


def entity_types_clean(values: Sequence[str] | None) -> tuple[str, ...]:
    """Entity types from repeated or comma-separated values; an unknown one is an error that names it."""
    types: list[str] = []
    for value in values or ():
        for part in str(value).split(","):
            part = part.strip().lower()
            if not part:
                continue
            if part not in EntityType.values:
                raise GraphQueryError(f"unknown entity type {part!r}; known types: {', '.join(EntityType.values)}")
            if part not in types:
                types.append(part)
    return tuple(types)


def entity_list(*, user, q: str = "", types: Sequence[str] = ()) -> QuerySet[Entity]:
    """The user's entities, most salient first; q matches the name or any alias (case-insensitive)."""
    qs = Entity.objects.for_user(user)
    if types:
        qs = qs.filter(type__in=list(types))
    q = " ".join((q or "").split())
    if q:
        qs = qs.filter(Q(name__icontains=q) | Q(key__icontains=canonical_key(q)) | Q(aliases__contains=[q.lower()]))
    return qs.order_by("-salience", "name", "id")


def entity_get(*, user, entity_id: int) -> Entity:
    return get_object_or_404(Entity.objects.for_user(user), pk=entity_id)


def entity_find(*, user, q: str) -> Entity | None:
    """The entity a search box means: an exact name or key first, else the most salient match."""
    q = " ".join((q or "").split())
    if not q:
        return None
    key = canonical_key(q)
    exact = Entity.objects.for_user(user).filter(Q(key=key) | Q(aliases__contains=[key])).first()
    return exact or entity_list(user=user, q=q).first()


def _snippet(text: str, start: int, end: int, width: int = SNIPPET_CHARS) -> dict:
    """The mention with some text either side, split so a template can highlight it."""
    left = max(0, start - width // 2)
    right = min(len(text), end + width // 2)
    return {
        "before": ("…" if left else "")
        + " ".join(text[left:start].split())
        + (" " if text[left:start][-1:].isspace() else ""),
        "match": text[start:end],
        "after": (" " if text[end:right][:1].isspace() else "")
        + " ".join(text[end:right].split())
        + ("…" if right < len(text) else ""),
    }


def _mention_snippet(mention: EntityMention, chunk, title: str) -> dict:
    """The snippet of a mention: in the chunk's text, or in the memory's title for a name only the
    title holds (graph.services.ingest keeps it on the chunk's first character)."""
    surface = mention.surface or ""
    if mention.end - mention.start == 1 and len(surface) > 1:
        at = title.casefold().find(surface.casefold())
        if at >= 0:
            return _snippet(title, at, at + len(surface))
    return _snippet(chunk.text, mention.start, mention.end)


def entity_memories(*, entity: Entity, limit: int = 20) -> list[dict]:
    """The memories that mention an entity, with the chunk (and passage) of the first mention in each."""
    rows = (
        EntityMention.objects.filter(entity=entity)
        .values("memory_id")
        .annotate(n=Count("id"))
        .order_by("-n", "memory_id")[:limit]
    )
    counts = {row["memory_id"]: row["n"] for row in rows}
    first: dict[int, EntityMention] = {}
    for found in (
        EntityMention.objects.filter(entity=entity, memory_id__in=counts)
        .select_related("chunk")
        .order_by("memory_id", "chunk__position", "start")
    ):
        first.setdefault(found.memory_id, found)
    memories = Memory.objects.filter(pk__in=counts).defer("content").in_bulk()
    items = []
    for memory_id, n in counts.items():
        if memory_id not in memories:  # trashed since the mentions were read
            continue
        mention = first.get(memory_id)
        chunk = mention.chunk if mention else None
        items.append(
            {
                "memory": memories[memory_id],
                "mentions": n,
                "chunk": chunk,
                "snippet": _mention_snippet(mention, chunk, memories[memory_id].title) if mention and chunk else None,
            }
        )
    return items


def entity_other_names(*, entity: Entity, limit: int = 500) -> list[str]:
    """The other ways the memories write an entity ("Priya" for Priya Nair, "Postgres" for PostgreSQL),
    as they are written, the commonest first; its aliases' keys when no mention is at hand."""
    written = (
        EntityMention.objects.filter(entity=entity, chunk__isnull=False)
        .annotate(written=Substr("chunk__text", F("start") + 1, F("end") - F("start")))
        .values_list("written", flat=True)[:limit]
    )
    seen: dict[str, Counter] = {}
    for name in written:
        name = " ".join((name or "").split())
        if name and name.casefold() != entity.name.casefold():
            seen.setdefault(name.casefold(), Counter())[name] += 1
    forms = sorted(seen.values(), key=lambda forms: -sum(forms.values()))
    return [found.most_common(1)[0][0] for found in forms] or list(entity.aliases)


def entity_relationships(*, entity: Entity, limit: int = 50) -> list[Relationship]:
    return list(
        Relationship.objects.filter(Q(source=entity) | Q(target=entity))
        .select_related("source", "target", "context_chunk")
        .order_by("-weight", "-confidence", "id")[:limit]
    )


def relationship_list(
    *, user, entity_id: int | None = None, relation_types: Sequence[str] = (), min_weight: float = 0.0
) -> QuerySet[Relationship]:
    qs = Relationship.objects.for_user(user).select_related("source", "target", "context_chunk")
    if entity_id is not None:
        entity = entity_get(user=user, entity_id=entity_id)
        qs = qs.filter(Q(source=entity) | Q(target=entity))
    if relation_types:
        qs = qs.filter(relation_type__in=list(relation_types))
    if min_weight:
        qs = qs.filter(weight__gte=min_weight)
    return qs.order_by("-weight", "-confidence", "id")


def memory_entities(*, memory: Memory, limit: int = 40) -> list[dict]:
    """The entities a memory mentions, most mentioned first."""
    rows = (
        EntityMention.objects.filter(memory=memory)
        .values("entity_id")
        .annotate(n=Count("id"))
        .order_by("-n", "entity_id")[:limit]
    )
    counts = {row["entity_id"]: row["n"] for row in rows}
    entities = Entity.objects.in_bulk(list(counts))
    return [{"entity": entities[pk], "mentions": n} for pk, n in counts.items() if pk in entities]


def memory_links(*, memory: Memory, limit: int = 20) -> list[dict]:
    """Memories linked to this one, strongest first: {"memory", "score", "reasons" (each link's
    explanation), "links" (the MemoryLink rows, with their evidence)}."""
    links = (
        MemoryLink.objects.filter(Q(source=memory) | Q(target=memory))
        .filter(source__trashed_at=None, target__trashed_at=None)
        .select_related("source", "target")
        .order_by("-score", "id")
    )
    related: dict[int, dict] = {}
    for link in links:
        other = link.target if link.source_id == memory.pk else link.source
        item = related.setdefault(other.pk, {"memory": other, "score": 0.0, "reasons": [], "links": []})
        item["score"] = max(item["score"], link.score)
        item["reasons"].append(link.explanation)
        item["links"].append(link)
    return sorted(related.values(), key=lambda item: (-item["score"], item["memory"].pk))[:limit]


# --- Graph views ----------------------------------------------------------------------------------


@dataclass
class GraphQuery:
    view: str = "entities"  # entities | memories
    memory_id: int | None = None
    entity_id: int | None = None
    types: tuple[str, ...] = ()
    tag: str = ""
    min_weight: float = 0.0
    limit: int = 150


def _check(query: GraphQuery) -> None:
    if query.view not in ("entities", "memories"):
        raise GraphQueryError("view must be 'entities' or 'memories'")
    if not 1 <= query.limit <= MAX_GRAPH_NODES:
        raise GraphQueryError(f"limit must be from 1 to {MAX_GRAPH_NODES}")
    if not 0.0 <= query.min_weight <= 1.0:
        raise GraphQueryError("minWeight must be from 0 to 1")


def graph_view(*, user, query: GraphQuery) -> dict:
    """Nodes and edges ready for cytoscape.js, capped at query.limit nodes (total says how many match).

    Entities view: entities as nodes (most salient first), relationships as edges. Memories view:
    memories as nodes grouped under their first topical tag, memory links as edges.
    """
    _check(query)
    query.tag = (filter_tags([query.tag]) or ("",))[0]
    if query.view == "memories":
        return _memory_graph(user=user, query=query)
    return _entity_graph(user=user, query=query)


def _entity_node(entity: Entity, *, cluster: str | None = None, isolated: bool = False) -> dict:
    return {
        "id": f"e{entity.pk}",
        "kind": "entity",
        "label": entity.name,
        "type": entity.type,
        "salience": round(entity.salience, 4),
        "mentionCount": entity.mention_count,
        "entityId": entity.pk,
        "memoryId": None,
        "tags": None,
        "parent": None,
        "cluster": cluster,
        "isolated": isolated,
    }


def _linked(min_weight: float) -> Q:
    """Entities with at least one relationship of at least min_weight, either way round."""
    edges = Relationship.objects.filter(weight__gte=min_weight)
    return Q(Exists(edges.filter(source_id=OuterRef("pk")))) | Q(Exists(edges.filter(target_id=OuterRef("pk"))))


def entity_clusters(node_ids: Sequence[int], edges: Sequence[tuple[int, int, float]]) -> list[list[int]]:
    """Communities of the drawn entity graph (Louvain modularity over relationship weights), largest
    first; a node without an edge is in none.

    Clusters come from the relationships rather than from the memories' tags because an entity is
    named in many memories with different tags, while the relationships say which entities the text
    puts together. Only the drawn subgraph (at most a few thousand nodes and four edges per node) is
    clustered, so the cost is bounded whatever the size of the account; the seed is fixed, so the
    same graph gives the same clusters on every load.
    """
    graph = nx.Graph()
    graph.add_nodes_from(node_ids)
    for source, target, weight in edges:
        # Several relation types between one pair add up; a weight of 0 would vanish from modularity.
        previous = graph.get_edge_data(source, target, {"weight": 0.0})["weight"]
        graph.add_edge(source, target, weight=previous + max(weight, 0.01))
    graph.remove_nodes_from([n for n in list(graph.nodes) if graph.degree(n) == 0])
    if not graph.number_of_edges():
        return []
    communities = nx.community.louvain_communities(graph, weight="weight", seed=7)
    order = {pk: i for i, pk in enumerate(node_ids)}  # node_ids come most salient first
    clusters = [sorted(c, key=order.__getitem__) for c in communities]
    return sorted(clusters, key=lambda c: (-len(c), order[c[0]]))


def _cluster_entry(cluster_id: str, labels: list[str], size: int) -> dict:
    """A cluster's name is its most salient members: what a person would call that part of the graph."""
    return {"id": cluster_id, "label": ", ".join(labels[:3]), "size": size}


def _edges_among(*, user, ids: Sequence[int], query: GraphQuery) -> list[Relationship]:
    return list(
        Relationship.objects.filter(
            owner=user, source_id__in=ids, target_id__in=ids, weight__gte=query.min_weight
        ).order_by("-weight", "id")[: query.limit * 4]
    )


def _salient_with_partners(*, user, qs: QuerySet[Entity], query: GraphQuery) -> list[Entity]:
    """The most salient linked entities, in order, each one that is linked to none of those before it
    taken with its strongest partner, until the limit is reached.

    Salience alone can pick entities that are each linked only to less salient ones: drawn, they would
    all stand alone. Bringing in each one's strongest partner keeps the first paint a graph. A fixed
    number of bounded queries, whatever the size of the account.
    """
    candidates = list(qs.order_by("-salience", "id")[: query.limit])
    ids = [e.pk for e in candidates]
    among: dict[int, set[int]] = {pk: set() for pk in ids}
    for edge in _edges_among(user=user, ids=ids, query=query):
        among[edge.source_id].add(edge.target_id)
        among[edge.target_id].add(edge.source_id)
    # A candidate linked to a more salient one will be drawn beside it; the others (the first of each
    # group, and those whose partners are all less salient) need their strongest partner with them.
    # Found either way round (DISTINCT ON per end); the partner must pass the same filters (types,
    # tag) as everything else drawn.
    rank = {pk: i for i, pk in enumerate(ids)}
    lonely = [pk for pk in ids if not any(rank[n] < rank[pk] for n in among[pk])]
    partner: dict[int, tuple[float, int | None]] = {}
    if lonely:
        allowed = qs.values("pk")
        edges = Relationship.objects.filter(owner=user, weight__gte=query.min_weight)
        for mine, other in (("source_id", "target_id"), ("target_id", "source_id")):
            rows = (
                edges.filter(**{f"{mine}__in": lonely, f"{other}__in": allowed})
                .order_by(mine, "-weight", other)
                .distinct(mine)
                .values_list(mine, other, "weight")
            )
            for one, two, weight in rows:
                if weight > partner.get(one, (-1.0, 0))[0]:
                    partner[one] = (weight, two)
    chosen: list[int] = []
    seen: set[int] = set()
    for pk in ids:
        if len(chosen) >= query.limit:
            break
        if pk in seen:
            continue
        chosen.append(pk)
        seen.add(pk)
        if among[pk] & seen:
            continue
        mate = partner.get(pk, (0.0, None))[1]
        if mate is not None and mate not in seen and len(chosen) < query.limit:
            chosen.append(mate)
            seen.add(mate)
    known = {e.pk: e for e in candidates}
    extra = Entity.objects.in_bulk([pk for pk in chosen if pk not in known])
    picked = [known.get(pk) or extra.get(pk) for pk in chosen]
    return sorted((e for e in picked if e is not None), key=lambda e: (-e.salience, e.pk))


def _entity_graph(*, user, query: GraphQuery) -> dict:
    qs = Entity.objects.for_user(user)
    if query.types:
        qs = qs.filter(type__in=list(query.types))
    if query.tag:
        qs = qs.filter(
            pk__in=EntityMention.objects.filter(owner=user, memory__tags__contains=[query.tag]).values("entity_id")
        )
    if query.memory_id is not None:
        memory = get_object_or_404(Memory.objects.for_user(user), pk=query.memory_id)
        qs = qs.filter(pk__in=EntityMention.objects.filter(memory=memory).values("entity_id"))
    centre = None
    if query.entity_id is not None:
        centre = entity_get(user=user, entity_id=query.entity_id)
        around = Relationship.objects.filter(Q(source=centre) | Q(target=centre), weight__gte=query.min_weight)
        neighbours = {pk for pair in around.values_list("source_id", "target_id") for pk in pair}
        qs = qs.filter(pk__in=neighbours | {centre.pk})
    total = qs.count()
    # The first paint starts from the most salient entities that have a relationship: an entity
    # without one would only sit on the edge of the drawing. Those are sent too (at most `limit`),
    # marked isolated, for the page to show on request.
    linked = _linked(query.min_weight)
    if centre is not None:
        entities = list(qs.filter(linked).order_by("-salience", "id")[: query.limit])
        if centre.pk not in {e.pk for e in entities}:
            entities = [centre, *entities[: query.limit - 1]]
    else:
        entities = _salient_with_partners(user=user, qs=qs.filter(linked), query=query)
    ids = [e.pk for e in entities]
    edges = _edges_among(user=user, ids=ids, query=query)
    touched = {pk for edge in edges for pk in (edge.source_id, edge.target_id)}
    drawn = [e for e in entities if e.pk in touched or e is centre]
    # A linked entity whose partners are all outside the cap is as alone in this view as one without
    # any relationship, so it joins the isolated ones rather than floating free.
    alone = [e for e in entities if e.pk not in touched and e is not centre]
    unlinked = qs.exclude(linked).exclude(pk__in=ids)
    isolated_total = len(alone) + unlinked.count()
    alone += list(unlinked.order_by("-salience", "id")[: max(0, query.limit - len(alone))])
    clusters = entity_clusters([e.pk for e in drawn], [(e.source_id, e.target_id, e.weight) for e in edges])
    names = {e.pk: e.name for e in drawn}
    cluster_of = {pk: f"c{i + 1}" for i, members in enumerate(clusters) for pk in members}
    nodes = [_entity_node(e, cluster=cluster_of.get(e.pk)) for e in drawn]
    nodes += [_entity_node(e, isolated=True) for e in alone]
    return {
        "view": "entities",
        "total": total,
        "limit": query.limit,
        "truncated": total > len(nodes),
        "centre": f"e{centre.pk}" if centre else None,
        "isolatedTotal": isolated_total,
        "clusters": [
            _cluster_entry(f"c{i + 1}", [names[pk] for pk in members], len(members))
            for i, members in enumerate(clusters)
        ],
        "nodes": nodes,
        "edges": [
            {
                "id": f"r{edge.pk}",
                "source": f"e{edge.source_id}",
                "target": f"e{edge.target_id}",
                "kind": "relationship",
                "relationType": edge.relation_type,
                "reason": None,
                "weight": round(edge.weight, 4),
                "confidence": round(edge.confidence, 4),
            }
            for edge in edges
        ],
    }


def _memory_graph(*, user, query: GraphQuery) -> dict:
    qs = Memory.objects.for_user(user).only("pk", "title", "tags", "manual_tags", "tier", "source", "metadata")
    if query.tag:
        qs = qs.filter(tags__contains=[query.tag])
    centre = None
    if query.memory_id is not None:
        centre = get_object_or_404(Memory.objects.for_user(user), pk=query.memory_id)
        linked = MemoryLink.objects.filter(Q(source=centre) | Q(target=centre), score__gte=query.min_weight)
        qs = qs.filter(
            pk__in={pk for pair in linked.values_list("source_id", "target_id") for pk in pair} | {centre.pk}
        )
    if query.entity_id is not None:
        entity = entity_get(user=user, entity_id=query.entity_id)
        qs = qs.filter(pk__in=EntityMention.objects.filter(entity=entity).values("memory_id"))
    total = qs.count()
    # The most connected memories first, so a capped view still shows the structure.
    degree = Count("links_out", distinct=True) + Count("links_in", distinct=True)
    memories = list(qs.annotate(degree=degree).order_by("-degree", "-pk")[: query.limit])
    if centre is not None and centre.pk not in {m.pk for m in memories}:
        memories = [centre, *memories[: query.limit - 1]]
    ids = [m.pk for m in memories]
    links = list(
        MemoryLink.objects.filter(
            owner=user, source_id__in=ids, target_id__in=ids, score__gte=query.min_weight
        ).order_by("-score", "id")[: query.limit * 4]
    )
    cluster_of = {m.pk: topical_tags(m)[:1] for m in memories}
    clusters = Counter(tag for tags in cluster_of.values() for tag in tags)
    nodes: list[dict[str, Any]] = [
        {
            "id": f"t:{tag}",
            "kind": "tag",
            "label": f"#{tag}",
            "type": None,
            "salience": None,
            "mentionCount": None,
            "entityId": None,
            "memoryId": None,
            "tags": None,
            "parent": None,
            "cluster": None,
            "isolated": False,
        }
        for tag, n in clusters.items()
        if n > 1
    ]
    grouped = {node["id"] for node in nodes}
    linked_ids = {pk for link in links for pk in (link.source_id, link.target_id)}
    isolated_total = 0
    for m in memories:
        parent = next((f"t:{tag}" for tag in cluster_of[m.pk] if f"t:{tag}" in grouped), None)
        # In no tag's group and linked to nothing drawn: hidden at first paint, like a lone entity.
        isolated = parent is None and m.pk not in linked_ids and centre is None
        isolated_total += isolated
        nodes.append(
            {
                "id": f"m{m.pk}",
                "kind": "memory",
                "label": m.title[:80],
                "type": m.tier,
                "salience": None,
                "mentionCount": None,
                "entityId": None,
                "memoryId": m.pk,
                "tags": list(m.tags),
                "parent": parent,
                "cluster": parent,
                "isolated": isolated,
            }
        )
    return {
        "view": "memories",
        "total": total,
        "limit": query.limit,
        "truncated": total > len(memories),
        "centre": f"m{centre.pk}" if centre else None,
        "isolatedTotal": isolated_total,
        "clusters": [
            _cluster_entry(f"t:{tag}", [f"#{tag}"], n) for tag, n in clusters.most_common() if f"t:{tag}" in grouped
        ],
        "nodes": nodes,
        "edges": [
            {
                "id": f"l{link.pk}",
                "source": f"m{link.source_id}",
                "target": f"m{link.target_id}",
                "kind": "link",
                "relationType": None,
                "reason": link.reason,
                "weight": round(link.score, 4),
                "confidence": round(link.confidence, 4),
            }
            for link in links
        ],
    }


def topical_tags(memory: Memory) -> list[str]:
    """The combined tags that say what a memory is about: where it came from (its source, file
    type or provider, the structural auto tags) is left out unless the user tagged it so."""
    structural = {item["tag"] for item in structural_auto_tags(source=memory.source, metadata=memory.metadata or {})}
    return [tag for tag in memory.tags if tag not in structural or tag in memory.manual_tags]


def memory_link_counts(memory_ids: Sequence[int], recent_since, active_since) -> dict[int, tuple[int, int]]:
    """For each memory: how many distinct memories in use it is linked to ("relationships"), and how
    many of those links were made or reinforced since recent_since ("recent active connections").
    A linked memory is in use when it was opened or created since active_since, or is pinned: a link
    into a part of the collection nobody uses any more keeps nothing hot, nor does one into the trash. The tier rules read these
    (registered in GraphConfig)."""
    if not memory_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH links AS (
                SELECT l.source_id AS memory_id, l.target_id AS other_id,
                       GREATEST(l.created_at, l.last_reinforced_at) AS seen
                FROM graph_memorylink l WHERE l.source_id = ANY(%(ids)s)
                UNION ALL
                SELECT l.target_id, l.source_id, GREATEST(l.created_at, l.last_reinforced_at)
                FROM graph_memorylink l WHERE l.target_id = ANY(%(ids)s)
            )
            SELECT links.memory_id, count(DISTINCT links.other_id),
                   count(DISTINCT links.other_id) FILTER (WHERE links.seen >= %(since)s)
            FROM links JOIN memories_memory other ON other.id = links.other_id
            WHERE other.trashed_at IS NULL
              AND (other.pinned OR COALESCE(other.last_accessed_at, other.created_at) >= %(active_since)s)
            GROUP BY links.memory_id
            """,
            {"ids": list(memory_ids), "since": recent_since, "active_since": active_since},
        )
        return {memory_id: (total, recent) for memory_id, total, recent in cursor.fetchall()}
