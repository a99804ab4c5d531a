"""The memories router: create (single and batch), list, read, update, delete."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja import File, Form, Query, Router, Schema, Status, UploadedFile
from pydantic import Field

from memories import search, selectors, services
from memories.models import Memory
from memories.tagging import split_tags
from core.schemas import ErrorOut
from memories.schemas import (
    ChatMessageIn,
    ChatMessageOut,
    ChatSessionDetailOut,
    ChatSessionListOut,
    SearchFiltersIn,
    SearchIn,
    SearchOut,
    SearchQueryIn,
    MemoryBatchIn,
    MemoryBatchOut,
    MemoryDetailOut,
    MemoryIn,
    MemoryOut,
    MemoryPageOut,
    MemoryPatchIn,
    SourceName,
    TagListOut,
    TagsIn,
    TierName,
    UploadJobOut,
    UploadResultsOut,
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
        "tierReason": memory.tier_reason,
        "tierChangedAt": memory.tier_changed_at,
        "decayScore": memory.decay_score,
        "accessCount": memory.access_count,
        "createdAt": memory.created_at,
        "updatedAt": memory.updated_at,
        "lastAccessedAt": memory.last_accessed_at,
        "chunkCount": _chunk_count(memory),
    }
    if with_content:
        out["content"] = memory.content
        out["tierHistory"] = [
            {"fromTier": move.from_tier, "toTier": move.to_tier, "reason": move.reason, "cause": move.cause,
             "movedAt": move.moved_at}
            for move in selectors.memory_tier_history(memory=memory)
        ]
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
    qs = selectors.memory_list(user=request.auth, tier=query.tier, source=query.source, tags=query.tag)
    page = list(qs[query.offset:query.offset + query.limit])
    return {"items": [memory_out(m) for m in page], "count": qs.count(), "limit": query.limit,
            "offset": query.offset}


@router.get("/memories/{memory_id}", response={200: MemoryDetailOut, **ERRORS}, summary="Read a memory")
def get_memory(request: HttpRequest, memory_id: int):
    """Reading one memory is a use of it and counts as an access (listing and searching do not)."""
    memory = services.memory_open(memory=selectors.memory_get(user=request.auth, memory_id=memory_id))
    return memory_out(memory, with_content=True)


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


@router.post("/memories/{memory_id}/tags", response={200: MemoryDetailOut, **ERRORS}, summary="Add manual tags")
def add_tags(request: HttpRequest, memory_id: int, payload: TagsIn):
    """Tags are normalised (trimmed, lowercased, spaces become hyphens); at most 50 manual tags."""
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return memory_out(services.memory_tags_add(memory=memory, tags=payload.tags), with_content=True)


@router.delete("/memories/{memory_id}/tags/{tag}", response={200: MemoryDetailOut, **ERRORS},
               summary="Remove a manual tag")
def remove_tag(request: HttpRequest, memory_id: int, tag: str):
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return memory_out(services.memory_tag_remove(memory=memory, tag=tag), with_content=True)


@router.post("/memories/{memory_id}/pin", response={200: MemoryDetailOut, **ERRORS}, summary="Pin a memory")
def pin_memory(request: HttpRequest, memory_id: int):
    """A pinned memory moves to hot at once and stays hot whatever else holds."""
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return memory_out(services.memory_pin(memory=memory, pinned=True), with_content=True)


@router.delete("/memories/{memory_id}/pin", response={200: MemoryDetailOut, **ERRORS}, summary="Unpin a memory")
def unpin_memory(request: HttpRequest, memory_id: int):
    """The tier rules decide again at once."""
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return memory_out(services.memory_pin(memory=memory, pinned=False), with_content=True)


class TagListQuery(Schema):
    prefix: str = Field("", max_length=64)
    limit: int = Field(200, ge=1, le=1000)


@router.get("/tags", response={200: TagListOut, **ERRORS}, summary="Tags with their counts")
def list_tags(request: HttpRequest, query: Query[TagListQuery]):
    """Every combined tag (manual and auto) on the user's memories, most used first."""
    return {"items": selectors.tag_counts(user=request.auth, prefix=query.prefix, limit=query.limit)}



# --- Uploads ---------------------------------------------------------------------------------


def upload_job_out(job) -> dict:
    return {"id": job.pk, "filename": job.filename, "status": job.status, "error": job.error or None,
            "memory": memory_out(job.memory) if job.memory_id else None, "createdAt": job.created_at,
            "updatedAt": job.updated_at}


def upload_status_url(job_id: int) -> str:
    return f"/api/v1/uploads/{job_id}"


@router.post("/uploads", response={200: UploadResultsOut, 202: UploadResultsOut, **ERRORS},
             summary="Upload files as memories")
def upload_files(request: HttpRequest, files: File[list[UploadedFile]], tags: Form[list[str]] = None):
    """One result per file, in input order: created, duplicate, queued (large files, 202) or rejected."""
    results = services.upload_files(owner=request.auth, files=files, manual_tags=split_tags(tags))
    body = {"results": [
        {"filename": r.filename, "status": r.status, "error": r.error,
         "memory": memory_out(r.memory) if r.memory else None,
         "jobId": r.job.pk if r.job else None, "statusUrl": upload_status_url(r.job.pk) if r.job else None}
        for r in results
    ]}
    if any(r.status == "queued" for r in results):
        return Status(202, body)
    if results and all(r.status == "rejected" and r.http_status == 413 for r in results):
        return Status(413, {"detail": "; ".join(f"{r.filename}: {r.error}" for r in results)})
    return Status(200, body)


@router.get("/uploads/{job_id}", response={200: UploadJobOut, **ERRORS}, summary="Status of a queued upload")
def upload_status(request: HttpRequest, job_id: int):
    return upload_job_out(selectors.upload_job_get(user=request.auth, job_id=job_id))


# --- Chat ------------------------------------------------------------------------------------


def related_out(item: dict) -> dict:
    memory = item["memory"]
    return {"memoryId": memory.pk, "title": memory.title, "snippet": item["snippet"], "score": item["score"],
            "source": memory.source, "tier": memory.tier}


def chat_session_out(session) -> dict:
    return {"id": session.pk, "title": session.title, "messageCount": session.message_count,
            "createdAt": session.created_at, "updatedAt": session.updated_at}


@router.post("/chat/messages", response={201: ChatMessageOut, **ERRORS}, summary="Send a chat message")
def chat_send(request: HttpRequest, payload: ChatMessageIn):
    """Stores the message as a memory and replies with the most related memories you already have."""
    session = (selectors.chat_session_get(user=request.auth, session_id=payload.sessionId)
               if payload.sessionId is not None else None)
    session, memory = services.chat_message_send(owner=request.auth, content=payload.content, session=session)
    related = selectors.memory_related(user=request.auth, memory=memory)
    return Status(201, {"sessionId": session.pk, "memory": memory_out(memory, with_content=True),
                        "related": [related_out(item) for item in related]})


@router.get("/chat/sessions", response={200: ChatSessionListOut, **ERRORS}, summary="List chat sessions")
def chat_sessions(request: HttpRequest):
    return {"items": [chat_session_out(s) for s in selectors.chat_session_list(user=request.auth)]}


@router.get("/chat/sessions/{session_id}", response={200: ChatSessionDetailOut, **ERRORS},
            summary="One chat session with its messages")
def chat_session(request: HttpRequest, session_id: int):
    session = selectors.chat_session_get(user=request.auth, session_id=session_id)
    messages = selectors.chat_session_messages(session=session)
    return {**chat_session_out(session), "messages": [memory_out(m, with_content=True) for m in messages]}



# --- Search ----------------------------------------------------------------------------------


def _as_list(value) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (value,)


def _aware(value):
    from django.utils import timezone

    if value is not None and timezone.is_naive(value):
        return timezone.make_aware(value, timezone.get_current_timezone())
    return value


def search_filters(data: SearchFiltersIn | None) -> search.SearchFilters:
    if data is None:
        return search.SearchFilters()
    return search.SearchFilters(
        tags=tuple(data.tags or ()), tags_mode=data.tagsMode, sources=_as_list(data.source),
        tiers=_as_list(data.tier) + tuple(data.tiers or ()), min_priority=data.minPriority,
        max_priority=data.maxPriority, created_after=_aware(data.createdAfter),
        created_before=_aware(data.createdBefore), updated_after=_aware(data.updatedAfter),
        updated_before=_aware(data.updatedBefore), title_contains=data.titleContains, pinned=data.pinned,
    )


def search_out(response: search.SearchResponse) -> dict:
    return {"tookMs": round(response.took_ms, 2), "results": [
        {"memoryId": r.memory_id, "chunkId": r.chunk_id, "title": r.title, "snippet": r.snippet,
         "hybridScore": r.hybrid_score, "vectorScore": r.vector_score, "metadataScore": r.metadata_score,
         "tier": r.tier, "source": r.source, "tags": r.tags, "createdAt": r.created_at}
        for r in response.results]}


@router.post("/search", response={200: SearchOut, **ERRORS}, summary="Hybrid search")
def search_post(request: HttpRequest, payload: SearchIn):
    """hybridScore = 0.7 · vectorScore + 0.3 · metadataScore; results are chunks, or each memory's best
    chunk with groupBy=memory."""
    response = search.hybrid_search(request.auth, payload.query, limit=payload.limit,
                                     filters=search_filters(payload.filters), group_by=payload.groupBy)
    return search_out(response)


@router.get("/search", response={200: SearchOut, **ERRORS}, summary="Hybrid search (query string)")
def search_get(request: HttpRequest, query: Query[SearchQueryIn]):
    data = query.model_dump()
    filters = SearchFiltersIn(tags=data.pop("tag") or None, source=data.pop("source") or None,
                              tiers=data.pop("tier") or None,
                              **{k: data.pop(k) for k in list(data) if k not in ("q", "limit", "groupBy")})
    response = search.hybrid_search(request.auth, data["q"], limit=data["limit"], filters=search_filters(filters),
                                    group_by=data["groupBy"])
    return search_out(response)
