"""The memories router: create (single and batch), list, read, update, delete."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import Field

from memories import selectors, services
from memories.models import Memory
from memories.schemas import (
    ErrorOut,
    MemoryBatchIn,
    MemoryBatchOut,
    MemoryDetailOut,
    MemoryIn,
    MemoryOut,
    MemoryPageOut,
    MemoryPatchIn,
    SourceName,
    TierName,
)

router = Router(tags=["memories"])

ERRORS = {401: ErrorOut, 404: ErrorOut, 413: ErrorOut, 422: ErrorOut}


def memory_out(memory: Memory, *, with_content: bool = False) -> dict:
    out = {
        "id": memory.pk,
        "title": memory.title,
        "source": memory.source,
        "priority": memory.priority,
        "tier": memory.tier,
        "pinned": memory.pinned,
        "tags": memory.tags,
        "autoTags": memory.auto_tags,
        "manualTags": memory.manual_tags,
        "summary": memory.summary,
        "metadata": memory.metadata,
        "decayScore": memory.decay_score,
        "accessCount": memory.access_count,
        "createdAt": memory.created_at,
        "updatedAt": memory.updated_at,
        "lastAccessedAt": memory.last_accessed_at,
        "chunkCount": _chunk_count(memory),
    }
    if with_content:
        out["content"] = memory.content
    return out


def _chunk_count(memory: Memory) -> int:
    count = getattr(memory, "chunk_count", None)  # annotated by selectors, set by services
    return memory.chunks.count() if count is None else count


def _input(item: MemoryIn) -> services.MemoryInput:
    return services.MemoryInput(title=item.title, content=item.content, source=item.source,
                                priority=item.priority, metadata=item.metadata or {}, manual_tags=item.tags or [])


@router.post("/memories", response={201: MemoryOut, **ERRORS}, summary="Create a memory")
def create_memory(request: HttpRequest, payload: MemoryIn):
    memory = services.memory_create_many(owner=request.auth, items=[_input(payload)], _single=True)[0]
    return Status(201, memory_out(memory))


@router.post("/memories/batch", response={201: MemoryBatchOut, **ERRORS}, summary="Create many memories at once")
def create_memories(request: HttpRequest, payload: MemoryBatchIn):
    """Up to 500 memories, embedded in one pass. One bad item refuses the whole batch and is named."""
    memories = services.memory_create_many(owner=request.auth, items=[_input(item) for item in payload.items])
    return Status(201, {"items": [memory_out(m) for m in memories]})


class MemoryListQuery(Schema):
    tier: TierName | None = None
    source: SourceName | None = None
    tag: list[str] = Field(default_factory=list, description="Repeatable; a memory must carry every tag given.")
    limit: int = Field(settings.KYBERNESIS_API_PAGE_SIZE, ge=1, le=500)
    offset: int = Field(0, ge=0)


@router.get("/memories", response={200: MemoryPageOut, **ERRORS}, summary="List memories")
def list_memories(request: HttpRequest, query: Query[MemoryListQuery]):
    tags = [t.strip().lower() for t in query.tag if t.strip()]
    qs = selectors.memory_list(user=request.auth, tier=query.tier, source=query.source, tags=tags)
    page = list(qs[query.offset:query.offset + query.limit])
    return {"items": [memory_out(m) for m in page], "count": qs.count(), "limit": query.limit,
            "offset": query.offset}


@router.get("/memories/{memory_id}", response={200: MemoryDetailOut, **ERRORS}, summary="Read a memory")
def get_memory(request: HttpRequest, memory_id: int):
    return memory_out(selectors.memory_get(user=request.auth, memory_id=memory_id), with_content=True)


@router.patch("/memories/{memory_id}", response={200: MemoryDetailOut, **ERRORS}, summary="Change a memory")
def patch_memory(request: HttpRequest, memory_id: int, payload: MemoryPatchIn):
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    changes = payload.model_dump(exclude_unset=True)
    if "tags" in changes:
        changes["manual_tags"] = changes.pop("tags")
    memory = services.memory_update(memory=memory, **changes)
    return memory_out(memory, with_content=True)


@router.delete("/memories/{memory_id}", response={204: None, **ERRORS}, summary="Delete a memory")
def delete_memory(request: HttpRequest, memory_id: int):
    services.memory_delete(memory=selectors.memory_get(user=request.auth, memory_id=memory_id))
    return Status(204, None)
