"""In and Out schemas of the graph API. JSON keys are camelCase, as in the spec."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.conf import settings
from ninja import Schema
from pydantic import Field, field_validator

from core.schemas import Id, OutSchema
from core.text import CleanStr, clean_str
from graph import selectors
from graph.models import RelationType
from graph.selectors import MAX_GRAPH_NODES, GraphQueryError, entity_types_clean


class _Query(Schema):
    pass


class _TypesQuery(_Query):
    types: list[CleanStr] = Field(default_factory=list, description="Entity types, repeated or comma-separated.")

    @field_validator("types")
    @classmethod
    def _known_types(cls, value: list[str]) -> list[str]:
        try:
            return list(entity_types_clean(value))
        except GraphQueryError as exc:
            raise ValueError(str(exc)) from exc


class GraphQueryIn(_TypesQuery):
    view: Literal["entities", "memories"] = "entities"
    memoryId: Id | None = None
    entityId: Id | None = None
    tag: clean_str(64) | None = None
    minWeight: float = Field(0.0, ge=0, le=1)
    limit: int = Field(settings.KYBERNESIS_GRAPH_NODE_LIMIT, ge=1, le=MAX_GRAPH_NODES)


class GraphNodeOut(Schema):
    id: str
    kind: Literal["entity", "memory", "tag"]
    label: str
    type: str | None
    salience: float | None
    mentionCount: int | None
    entityId: int | None
    memoryId: int | None
    tags: list[str] | None
    parent: str | None
    cluster: str | None = Field(None, description="The cluster the node is drawn in (see `clusters`)")
    isolated: bool = Field(False, description="No edge to another node of this view; hidden at first paint")


class GraphEdgeOut(Schema):
    id: str
    source: str
    target: str
    kind: Literal["relationship", "link"]
    relationType: str | None
    reason: str | None
    weight: float
    confidence: float


class GraphClusterOut(Schema):
    id: str
    label: str = Field(description="Its most salient members (entities) or its tag (memories)")
    size: int


class GraphOut(Schema):
    view: str
    nodes: list[GraphNodeOut]
    edges: list[GraphEdgeOut]
    total: int
    limit: int
    truncated: bool
    centre: str | None
    clusters: list[GraphClusterOut] = Field(
        default_factory=list,
        description="Entities: communities of the drawn relationships (Louvain). Memories: topical tags",
    )
    isolatedTotal: int = Field(0, description="How many matching nodes have no edge in this view")


class EntityListQueryIn(_TypesQuery):
    q: clean_str(200) | None = None


class EntityOut(OutSchema):
    id: int
    name: str
    type: str
    salience: float
    mention_count: int
    memory_count: int
    aliases: list[str]
    first_seen: datetime
    last_seen: datetime


class EntityRefOut(OutSchema):
    id: int
    name: str
    type: str


class RelationshipOut(OutSchema):
    id: int
    source: EntityRefOut
    target: EntityRefOut
    relation_type: str
    weight: float
    confidence: float
    evidence_count: int
    context_chunk_id: int | None
    context_memory_id: int | None
    evidence: str
    created_at: datetime
    last_seen: datetime

    @staticmethod
    def resolve_context_memory_id(edge) -> int | None:
        return edge.context_chunk.memory_id if edge.context_chunk_id else None


class EntityMemoryOut(OutSchema):
    """From entity_memories' items: {"memory", "mentions", "chunk", "snippet"}."""

    memory_id: int
    title: str
    mentions: int
    chunk_id: int | None
    snippet: str | None

    @staticmethod
    def resolve_memory_id(item) -> int:
        return item["memory"].pk

    @staticmethod
    def resolve_title(item) -> str:
        return item["memory"].title

    @staticmethod
    def resolve_chunk_id(item) -> int | None:
        return item["chunk"].pk if item["chunk"] else None

    @staticmethod
    def resolve_snippet(item) -> str | None:
        return "".join(item["snippet"].values()) if item["snippet"] else None


class EntityDetailOut(EntityOut):
    memories: list[EntityMemoryOut]
    relationships: list[RelationshipOut]

    @staticmethod
    def resolve_memories(entity) -> list[dict]:
        return selectors.entity_memories(entity=entity)

    @staticmethod
    def resolve_relationships(entity) -> list:
        return selectors.entity_relationships(entity=entity)


class RelationshipListQueryIn(_Query):
    entityId: Id | None = None
    relationTypes: list[RelationType] = Field(default_factory=list)
    minWeight: float = Field(0.0, ge=0, le=1)


class SharedThingOut(Schema):
    """A name or tag two linked memories share, weighted by its rarity in the collection (1: only the
    two carry it) times how firmly each carries it."""

    name: str
    weight: float


class LinkEvidenceOut(Schema):
    """Why a link by content exists (graph.linkrules): what the two memories share and how close they
    are in meaning. similarity is None for a link the material states, or one scored before the
    evidence was kept."""

    similarity: float | None
    standing: float | None
    overlap: float | None
    entities: list[SharedThingOut]
    tags: list[SharedThingOut]
    filed: list[str]
    nearDuplicate: bool


class MemoryLinkOut(OutSchema):
    reason: str
    score: float
    confidence: float
    explanation: str
    evidence: LinkEvidenceOut
    rules_version: int
    created_at: datetime
    last_reinforced_at: datetime

    @staticmethod
    def resolve_evidence(link) -> dict:
        details = link.details or {}
        shared = {
            kind: [{"name": name, "weight": weight} for name, weight in details.get(kind) or []]
            for kind in ("entities", "tags")
        }
        if not details and link.evidence:  # scored before the weights were kept: the names alone
            shared["entities" if link.reason != "shared_tags" else "tags"] = [
                {"name": name, "weight": 0.0} for name in link.evidence.split("|") if name
            ]
        return {
            "similarity": details.get("similarity"),
            "standing": details.get("standing"),
            "overlap": details.get("overlap"),
            **shared,
            "filed": details.get("filed") or [],
            "nearDuplicate": bool(details.get("nearDuplicate")),
        }


class LinkedMemoryRefOut(OutSchema):
    id: int
    title: str


class RelatedMemoryOut(OutSchema):
    """From memory_links' items: a linked memory, the strongest of its links' scores, and each link."""

    memory: LinkedMemoryRefOut
    score: float
    links: list[MemoryLinkOut]

    @staticmethod
    def resolve_memory(item) -> object:
        return item["memory"]

    @staticmethod
    def resolve_score(item) -> float:
        return item["score"]

    @staticmethod
    def resolve_links(item) -> list:
        return item["links"]
