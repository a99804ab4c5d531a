"""In and Out schemas of the graph API. JSON keys are camelCase, as in the spec."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.conf import settings
from ninja import Schema
from pydantic import Field, field_validator

from core.schemas import MAX_OFFSET, Id
from core.text import CleanStr
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
    tag: CleanStr | None = Field(None, max_length=64)
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


class GraphEdgeOut(Schema):
    id: str
    source: str
    target: str
    kind: Literal["relationship", "link"]
    relationType: str | None
    reason: str | None
    weight: float
    confidence: float


class GraphOut(Schema):
    view: str
    nodes: list[GraphNodeOut]
    edges: list[GraphEdgeOut]
    total: int
    limit: int
    truncated: bool
    centre: str | None


class EntityListQueryIn(_TypesQuery):
    q: CleanStr | None = Field(None, max_length=200)
    limit: int = Field(settings.KYBERNESIS_API_PAGE_SIZE, ge=1, le=500)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class EntityOut(Schema):
    id: int
    name: str
    type: str
    salience: float
    mentionCount: int
    memoryCount: int
    aliases: list[str]
    firstSeen: datetime
    lastSeen: datetime


class EntityPageOut(Schema):
    items: list[EntityOut]
    count: int
    limit: int
    offset: int


class EntityRefOut(Schema):
    id: int
    name: str
    type: str


class RelationshipOut(Schema):
    id: int
    source: EntityRefOut
    target: EntityRefOut
    relationType: str
    weight: float
    confidence: float
    evidenceCount: int
    contextChunkId: int | None
    contextMemoryId: int | None
    evidence: str
    createdAt: datetime
    lastSeen: datetime


class EntityMemoryOut(Schema):
    memoryId: int
    title: str
    mentions: int
    chunkId: int | None
    snippet: str | None


class EntityDetailOut(EntityOut):
    memories: list[EntityMemoryOut]
    relationships: list[RelationshipOut]


class RelationshipListQueryIn(_Query):
    entityId: Id | None = None
    relationTypes: list[RelationType] = Field(default_factory=list)
    minWeight: float = Field(0.0, ge=0, le=1)
    limit: int = Field(settings.KYBERNESIS_API_PAGE_SIZE, ge=1, le=500)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class RelationshipPageOut(Schema):
    items: list[RelationshipOut]
    count: int
    limit: int
    offset: int
