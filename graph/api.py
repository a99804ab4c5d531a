"""The graph router: the graph for the topology page, entities, relationships."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router

from graph import selectors
from graph.models import Entity, Relationship
from graph.schemas import (
    EntityDetailOut,
    EntityListQueryIn,
    EntityPageOut,
    GraphOut,
    GraphQueryIn,
    RelationshipListQueryIn,
    RelationshipPageOut,
)
from core.schemas import ErrorOut

router = Router(tags=["graph"])

ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


def entity_out(entity: Entity) -> dict:
    return {"id": entity.pk, "name": entity.name, "type": entity.type, "salience": entity.salience,
            "mentionCount": entity.mention_count, "memoryCount": entity.memory_count, "aliases": entity.aliases,
            "firstSeen": entity.first_seen, "lastSeen": entity.last_seen}


def relationship_out(edge: Relationship) -> dict:
    ref = lambda e: {"id": e.pk, "name": e.name, "type": e.type}  # noqa: E731
    return {"id": edge.pk, "source": ref(edge.source), "target": ref(edge.target), "relationType": edge.relation_type,
            "weight": edge.weight, "confidence": edge.confidence, "evidenceCount": edge.evidence_count,
            "contextChunkId": edge.context_chunk_id,
            "contextMemoryId": edge.context_chunk.memory_id if edge.context_chunk_id else None,
            "evidence": edge.evidence, "createdAt": edge.created_at, "lastSeen": edge.last_seen}


@router.get("/graph", response={200: GraphOut, **ERRORS}, summary="Nodes and edges for the topology page")
def graph(request: HttpRequest, query: Query[GraphQueryIn]):
    """view=entities (entities and relationships) or view=memories (memories and memory links).
    At most `limit` nodes, most salient (or most connected) first; `total` says how many matched."""
    return selectors.graph_view(user=request.auth, query=selectors.GraphQuery(
        view=query.view, memory_id=query.memoryId, entity_id=query.entityId, types=tuple(query.types),
        tag=query.tag or "", min_weight=query.minWeight, limit=query.limit))


@router.get("/entities", response={200: EntityPageOut, **ERRORS}, summary="List or search entities")
def list_entities(request: HttpRequest, query: Query[EntityListQueryIn]):
    qs = selectors.entity_list(user=request.auth, q=query.q or "", types=query.types)
    page = list(qs[query.offset:query.offset + query.limit])
    return {"items": [entity_out(e) for e in page], "count": qs.count(), "limit": query.limit, "offset": query.offset}


@router.get("/entities/{entity_id}", response={200: EntityDetailOut, **ERRORS},
            summary="One entity with its memories and relationships")
def get_entity(request: HttpRequest, entity_id: int):
    entity = selectors.entity_get(user=request.auth, entity_id=entity_id)
    memories = [{"memoryId": item["memory"].pk, "title": item["memory"].title, "mentions": item["mentions"],
                 "chunkId": item["chunk"].pk if item["chunk"] else None,
                 "snippet": "".join(item["snippet"].values()) if item["snippet"] else None}
                for item in selectors.entity_memories(entity=entity)]
    return {**entity_out(entity), "memories": memories,
            "relationships": [relationship_out(r) for r in selectors.entity_relationships(entity=entity)]}


@router.get("/relationships", response={200: RelationshipPageOut, **ERRORS}, summary="List relationships")
def list_relationships(request: HttpRequest, query: Query[RelationshipListQueryIn]):
    qs = selectors.relationship_list(user=request.auth, entity_id=query.entityId,
                                     relation_types=[str(t) for t in query.relationTypes], min_weight=query.minWeight)
    page = list(qs[query.offset:query.offset + query.limit])
    return {"items": [relationship_out(r) for r in page], "count": qs.count(), "limit": query.limit,
            "offset": query.offset}
