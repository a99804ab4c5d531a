"""In and Out schemas of the memories API. JSON keys are camelCase, as in the spec."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field

SourceName = Literal["upload", "chat", "connector"]
TierName = Literal["hot", "warm", "archive"]


class StrictIn(Schema):
    # Unknown keys are refused rather than silently dropped, so a typo gets a 422 that names it.
    model_config = ConfigDict(extra="forbid", strict=True)


class MemoryIn(StrictIn):
    title: str | None = Field(None, description="Empty or missing: the first line of the content.")
    content: str
    tags: list[str] | None = Field(None, description="Manual tags; trimmed, lowercased, spaces become hyphens.")
    source: SourceName = "upload"
    priority: float | None = Field(None, description="0 to 1; omitted means the default.")
    metadata: dict[str, Any] | None = None


class MemoryBatchIn(StrictIn):
    items: list[MemoryIn]


class MemoryPatchIn(StrictIn):
    title: str | None = None
    content: str | None = None
    tags: list[str] | None = None
    source: SourceName | None = None
    priority: float | None = None
    metadata: dict[str, Any] | None = None


class AutoTagOut(Schema):
    tag: str
    confidence: float


class MemoryOut(Schema):
    id: int
    title: str
    source: str
    priority: float
    tier: str
    pinned: bool
    tags: list[str]
    autoTags: list[AutoTagOut]
    manualTags: list[str]
    summary: str
    metadata: dict[str, Any]
    tierReason: str
    tierChangedAt: datetime | None
    decayScore: float
    accessCount: int
    createdAt: datetime
    updatedAt: datetime
    lastAccessedAt: datetime | None
    chunkCount: int


class TierMoveOut(Schema):
    fromTier: str
    toTier: str
    reason: str
    cause: str
    movedAt: datetime


class MemoryDetailOut(MemoryOut):
    content: str
    tierHistory: list[TierMoveOut]


class TagsIn(StrictIn):
    tags: list[str] = Field(..., description="Manual tags to add; trimmed, lowercased, spaces become hyphens.")


class TagCountOut(Schema):
    tag: str
    count: int = Field(..., description="Memories carrying the tag, manual or auto.")
    manual: int = Field(..., description="Memories where it is a manual tag.")


class TagListOut(Schema):
    items: list[TagCountOut]


class MemoryBatchOut(Schema):
    items: list[MemoryOut]


class MemoryPageOut(Schema):
    items: list[MemoryOut]
    count: int
    limit: int
    offset: int


class UploadResultOut(Schema):
    filename: str
    status: Literal["created", "duplicate", "queued", "rejected"]
    memory: MemoryOut | None = None
    error: str | None = None
    jobId: int | None = None
    statusUrl: str | None = None


class UploadResultsOut(Schema):
    results: list[UploadResultOut]


class UploadJobOut(Schema):
    id: int
    filename: str
    status: Literal["pending", "processing", "done", "failed"]
    error: str | None = None
    memory: MemoryOut | None = None
    createdAt: datetime
    updatedAt: datetime


class ChatMessageIn(StrictIn):
    sessionId: int | None = None
    content: str


class RelatedMemoryOut(Schema):
    memoryId: int
    chunkIndex: int = Field(description="Position of the matched chunk in its memory (0-based)")
    url: str = Field(description="The memory page at the matched chunk")
    title: str
    snippet: str
    score: float = Field(description="hybridScore of the message (as the query) against this memory")
    kind: str = Field(description='"question" for a chat message that asks something, else ""')
    source: str
    tier: str


class ChatMessageOut(Schema):
    sessionId: int
    memory: MemoryDetailOut
    related: list[RelatedMemoryOut]


class ChatSessionOut(Schema):
    id: int
    title: str
    messageCount: int
    createdAt: datetime
    updatedAt: datetime


class ChatSessionListOut(Schema):
    items: list[ChatSessionOut]


class ChatSessionDetailOut(ChatSessionOut):
    messages: list[MemoryDetailOut]


MIN_SCORE_HELP = ("Relevance floor on hybridScore, 0..1. Default: the calibrated floor (KYBERNESIS_SEARCH_MIN_SCORE); "
                  "0 returns every candidate.")


class _SearchFilterFields(Schema):
    model_config = ConfigDict(extra="forbid")

    tagsMode: Literal["any", "all"] = "any"
    minPriority: float | None = Field(None, ge=0, le=1)
    maxPriority: float | None = Field(None, ge=0, le=1)
    createdAfter: datetime | None = None
    createdBefore: datetime | None = None
    updatedAfter: datetime | None = None
    updatedBefore: datetime | None = None
    titleContains: str | None = Field(None, max_length=500)
    pinned: bool | None = None


class SearchFiltersIn(_SearchFilterFields):
    tags: list[str] | None = None
    source: SourceName | list[SourceName] | None = None
    tier: TierName | list[TierName] | None = None
    tiers: list[TierName] | None = None


class SearchQueryIn(_SearchFilterFields):
    """GET /search: the filters as query parameters (repeat tag, source and tier for several)."""

    q: str
    limit: int = 10
    groupBy: Literal["chunk", "memory"] = "chunk"
    minScore: float | None = Field(None, ge=0, le=1, description=MIN_SCORE_HELP)
    tag: list[str] = Field(default_factory=list)
    source: list[SourceName] = Field(default_factory=list)
    tier: list[TierName] = Field(default_factory=list)


class SearchIn(StrictIn):
    query: str
    limit: int = 10
    filters: SearchFiltersIn | None = None
    groupBy: Literal["chunk", "memory"] = "chunk"
    minScore: float | None = Field(None, ge=0, le=1, description=MIN_SCORE_HELP)


class SearchResultOut(Schema):
    memoryId: int
    chunkId: int
    chunkIndex: int = Field(description="Position of the chunk in its memory (0-based); the page anchor is "
                                        "#chunk-<chunkIndex>")
    url: str = Field(description="The memory page at this chunk")
    kind: str = Field(description='"question" for a chat message that asks something, else ""')
    title: str
    snippet: str
    hybridScore: float
    vectorScore: float
    metadataScore: float
    tier: str
    source: str
    tags: list[str]
    createdAt: datetime


class SearchOut(Schema):
    results: list[SearchResultOut]
    minScore: float = Field(description="The relevance floor applied (hybridScore below it is left out)")
    weakerCount: int = Field(description="Candidates the floor left out; ask again with a lower minScore to see them")
    reason: str | None = Field(None, description="Why nothing was searched (a query of only common words or "
                                                 "punctuation)")
    tookMs: float
