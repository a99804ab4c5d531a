"""The graph router: the graph for the topology page, entities, relationships, memory links."""

from django.conf import settings
from django.http import HttpRequest
from ninja import Query, Router
from ninja.pagination import paginate

from core.pagination import LimitOffset
from core.schemas import ErrorOut, Id
from graph import selectors
from graph.schemas import (
    EntityDetailOut,
    EntityListQueryIn,
    EntityOut,
    GraphOut,
    GraphQueryIn,
    RelatedMemoryOut,
    RelationshipListQueryIn,
    RelationshipOut,
)
from memories.selectors import memory_get

router = Router(tags=["graph"], by_alias=True)

ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


@router.get("/graph", response={200: GraphOut, **ERRORS}, summary="Nodes and edges for the topology page")
def graph(request: HttpRequest, query: Query[GraphQueryIn]):
    """view=entities (entities and relationships) or view=memories (memories and memory links).
    At most `limit` nodes, most salient (or most connected) first; `total` says how many matched."""
    return selectors.graph_view(
        user=request.auth,
        query=selectors.GraphQuery(
            view=query.view,
            memory_id=query.memoryId,
            entity_id=query.entityId,
            types=tuple(query.types),
            tag=query.tag or "",
            min_weight=query.minWeight,
            limit=query.limit,
        ),
    )


@router.get("/entities", response={200: list[EntityOut], **ERRORS}, summary="List or search entities")
@paginate(LimitOffset, default=settings.KYBERNESIS_API_PAGE_SIZE, maximum=500)
def list_entities(request: HttpRequest, query: Query[EntityListQueryIn]):
    return selectors.entity_list(user=request.auth, q=query.q or "", types=query.types)


@router.get(
    "/entities/{entity_id}",
    response={200: EntityDetailOut, **ERRORS},
    summary="One entity with its memories and relationships",
)
def get_entity(request: HttpRequest, entity_id: Id):
    return selectors.entity_get(user=request.auth, entity_id=entity_id)


@router.get("/relationships", response={200: list[RelationshipOut], **ERRORS}, summary="List relationships")
@paginate(LimitOffset, default=settings.KYBERNESIS_API_PAGE_SIZE, maximum=500)
def list_relationships(request: HttpRequest, query: Query[RelationshipListQueryIn]):
    return selectors.relationship_list(
        user=request.auth,
        entity_id=query.entityId,
        relation_types=[str(t) for t in query.relationTypes],
        min_weight=query.minWeight,
    )


@router.get(
    "/memories/{memory_id}/links",
    response={200: list[RelatedMemoryOut], **ERRORS},
    summary="The memories linked to a memory, and why",
)
def memory_links(request: HttpRequest, memory_id: Id):
    """Linked memories, strongest first, each with its links: reason, score, a sentence saying why,
    and the evidence (the shared names and tags with their weights, the similarity)."""
    return selectors.memory_links(memory=memory_get(user=request.auth, memory_id=memory_id), limit=50)
