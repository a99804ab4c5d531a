"""The memories router: create (single and batch), list, read, update, delete (to the trash), the trash."""

from django.conf import settings
from django.http import HttpRequest
from ninja import File, Form, Query, Router, Schema, Status, UploadedFile
from ninja.pagination import paginate
from pydantic import Field

from core.auth import token_scope
from core.language import parse_language_code
from core.pagination import LimitOffset
from core.schemas import ErrorOut, Id
from core.text import CleanStr
from memories import history, original_files, search, selectors, services
from memories.schemas import (
    ActivityOut,
    ChatMessageIn,
    ChatMessageOut,
    ChatSessionDetailOut,
    ChatSessionListOut,
    LanguageFilter,
    MemoryBatchIn,
    MemoryBatchOut,
    MemoryDetailOut,
    MemoryIn,
    MemoryOut,
    MemoryPatchIn,
    SearchFiltersIn,
    SearchIn,
    SearchOut,
    SearchQueryIn,
    SourceName,
    TagListOut,
    TagsIn,
    TierName,
    TrashedMemoryOut,
    TrashEmptiedOut,
    UploadJobOut,
    UploadResultsOut,
    VersionDetailOut,
    VersionOut,
)
from memories.search import answers
from memories.services.restore import memory_version_restore
from memories.tag_rules import split_tags

router = Router(tags=["memories"], by_alias=True)

ERRORS = {401: ErrorOut, 404: ErrorOut, 413: ErrorOut, 422: ErrorOut}


def _fields(item: MemoryIn) -> dict:
    return {
        "title": item.title,
        "content": item.content,
        "source": item.source,
        "priority": item.priority,
        "metadata": item.metadata or {},
        "manual_tags": item.tags or [],
        "kind": item.kind,
    }


@router.post("/memories", response={201: MemoryOut, 200: MemoryOut, **ERRORS}, summary="Create a memory")
def create_memory(request: HttpRequest, payload: MemoryIn):
    """201 with the new memory; 200 with the existing one when you already have a memory with exactly
    this content (a retried or repeated create stores nothing twice, even when sent concurrently)."""
    memory = services.memory_create(owner=request.auth, **_fields(payload), unique=True)
    return Status(201 if memory.created else 200, memory)


@router.post("/memories/batch", response={201: MemoryBatchOut, **ERRORS}, summary="Create many memories at once")
def create_memories(request: HttpRequest, payload: MemoryBatchIn):
    """Up to 500 memories, embedded in one pass. One bad item refuses the whole batch and is named."""
    memories = services.memory_create_many(
        owner=request.auth, items=[services.MemoryInput(**_fields(item)) for item in payload.items]
    )
    return Status(201, {"items": memories})


class MemoryListQuery(Schema):
    tier: TierName | None = None
    source: SourceName | None = None
    tag: list[CleanStr] = Field(default_factory=list, description="Repeatable; a memory must carry every tag given.")
    language: LanguageFilter = None


@router.get("/memories", response={200: list[MemoryOut], **ERRORS}, summary="List memories")
@paginate(LimitOffset, default=settings.KYBERNESIS_API_PAGE_SIZE, maximum=500)
def list_memories(request: HttpRequest, query: Query[MemoryListQuery]):
    return selectors.memory_list(
        user=request.auth,
        tier=query.tier,
        source=query.source,
        tags=query.tag,
        language=parse_language_code(query.language),
    )


@router.get("/memories/{memory_id}", response={200: MemoryDetailOut, **ERRORS}, summary="Read a memory")
def get_memory(request: HttpRequest, memory_id: Id):
    """Reading one memory is a use of it and counts as an access (listing and searching do not)."""
    return services.memory_open(memory=selectors.memory_get(user=request.auth, memory_id=memory_id))


@router.patch("/memories/{memory_id}", response={200: MemoryDetailOut, **ERRORS}, summary="Change a memory")
def patch_memory(request: HttpRequest, memory_id: Id, payload: MemoryPatchIn):
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    changes = payload.model_dump(exclude_unset=True)
    if "tags" in changes:
        changes["manual_tags"] = changes.pop("tags")
    return services.memory_update(memory=memory, **changes)


@router.delete("/memories/{memory_id}", response={204: None, **ERRORS}, summary="Move a memory to the trash")
def delete_memory(request: HttpRequest, memory_id: Id):
    """The memory leaves search, lists, the graph and MCP at once, and keeps everything it had: restore
    it with POST /trash/{id}/restore until it is purged KYBERNESIS_TRASH_DAYS later."""
    services.memory_delete(memory=selectors.memory_get(user=request.auth, memory_id=memory_id))
    return Status(204, None)


@router.get(
    "/memories/{memory_id}/original",
    response={200: None, **ERRORS},
    summary="Download a memory's original file",
    openapi_extra={
        "responses": {
            200: {
                "description": "The file's bytes, as an attachment named after the file.",
                "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
            }
        }
    },
)
def get_original(request: HttpRequest, memory_id: Id):
    """The file the memory was made from, byte for byte; 404 when none was kept (or the memory is not yours)."""
    return original_files.response(selectors.memory_original_get(user=request.auth, memory_id=memory_id), inline=False)


@router.post("/memories/{memory_id}/tags", response={200: MemoryDetailOut, **ERRORS}, summary="Add manual tags")
def add_tags(request: HttpRequest, memory_id: Id, payload: TagsIn):
    """Tags are normalised (trimmed, lowercased, spaces become hyphens); at most 50 manual tags."""
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return services.memory_tags_add(memory=memory, tags=payload.tags)


@router.delete(
    "/memories/{memory_id}/tags/{tag}", response={200: MemoryDetailOut, **ERRORS}, summary="Remove a manual tag"
)
def remove_tag(request: HttpRequest, memory_id: Id, tag: CleanStr):
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return services.memory_tag_remove(memory=memory, tag=tag)


@router.post("/memories/{memory_id}/pin", response={200: MemoryDetailOut, **ERRORS}, summary="Pin a memory")
def pin_memory(request: HttpRequest, memory_id: Id):
    """A pinned memory moves to hot at once and stays hot whatever else holds."""
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return services.memory_pin(memory=memory, pinned=True)


@router.delete("/memories/{memory_id}/pin", response={200: MemoryDetailOut, **ERRORS}, summary="Unpin a memory")
def unpin_memory(request: HttpRequest, memory_id: Id):
    """The tier rules decide again at once."""
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return services.memory_pin(memory=memory, pinned=False)


@router.get(
    "/memories/{memory_id}/versions", response={200: list[VersionOut], **ERRORS}, summary="List a memory's versions"
)
@paginate(LimitOffset, default=20, maximum=200)
def list_versions(request: HttpRequest, memory_id: Id):
    """Newest first. Version 1 is the memory as stored; each change of its title, content, tags, summary,
    priority, pin or metadata made the next, by the actor named. The newest KYBERNESIS_HISTORY_KEEP are kept."""
    return history.memory_version_list(user=request.auth, memory_id=memory_id)


class VersionQuery(Schema):
    diff_from: int | None = Field(
        None, alias="diffFrom", description="Count the changes from this version (default: the one before)."
    )


@router.get(
    "/memories/{memory_id}/versions/{number}", response={200: VersionDetailOut, **ERRORS}, summary="Read one version"
)
def get_version(request: HttpRequest, memory_id: Id, number: str, query: Query[VersionQuery]):
    """A version number that is 0, negative, not a number, past the latest or no longer kept is a 404 that says which."""
    return history.memory_version_detail(
        user=request.auth, memory_id=memory_id, number=number, diff_from=query.diff_from
    )


@router.post(
    "/memories/{memory_id}/versions/{number}/restore",
    response={200: MemoryDetailOut, **ERRORS},
    summary="Restore a version",
)
def restore_version(request: HttpRequest, memory_id: Id, number: str):
    """The memory becomes what the version was (title, content, tags, summary, priority, pin, metadata); it is
    re-chunked and re-embedded, and the restore is itself a new version. Restoring the current state changes nothing."""
    memory = selectors.memory_get(user=request.auth, memory_id=memory_id)
    return memory_version_restore(memory=memory, number=number)


@router.get(
    "/memories/{memory_id}/activity", response={200: list[ActivityOut], **ERRORS}, summary="A memory's activity"
)
@paginate(LimitOffset, default=50, maximum=500)
def memory_activity(request: HttpRequest, memory_id: Id):
    """Newest first: what happened to the memory and who did it, tier moves included."""
    return history.activity_trail(user=request.auth, memory_id=memory_id)


@router.get("/activity", response={200: list[ActivityOut], **ERRORS}, summary="The account's activity")
@paginate(LimitOffset, default=50, maximum=500)
def account_activity(request: HttpRequest):
    """Newest first, across every memory of the account, purged ones included."""
    return history.activity_trail(user=request.auth)


class TagListQuery(Schema):
    prefix: CleanStr = Field("", max_length=64)
    limit: int = Field(200, ge=1, le=1000)


@router.get("/tags", response={200: TagListOut, **ERRORS}, summary="Tags with their counts")
def list_tags(request: HttpRequest, query: Query[TagListQuery]):
    """Every combined tag (manual and auto) on the user's memories, most used first."""
    return {"items": selectors.tag_counts(user=request.auth, prefix=query.prefix, limit=query.limit)}


# --- Uploads ---------------------------------------------------------------------------------


@router.post(
    "/uploads", response={200: UploadResultsOut, 202: UploadResultsOut, **ERRORS}, summary="Upload files as memories"
)
def upload_files(
    request: HttpRequest,
    files: File[list[UploadedFile]],
    tags: Form[list[CleanStr]] = None,
    title: Form[CleanStr | None] = None,
):
    """One result per file, in input order: created, duplicate, queued (large files, 202) or rejected.
    A memory's title is `title` when given (one file only), else the title the document declares
    (PDF metadata, a first heading, ...), else the file name; the file name stays in metadata.filename."""
    results = services.upload_files(owner=request.auth, files=files, manual_tags=split_tags(tags), title=title)
    body = {"results": results}
    if any(r.status == "queued" for r in results):
        return Status(202, body)
    if results and all(r.status == "rejected" and r.http_status == 413 for r in results):
        return Status(413, {"detail": "; ".join(f"{r.filename}: {r.error}" for r in results)})
    return Status(200, body)


@router.get("/uploads/{job_id}", response={200: UploadJobOut, **ERRORS}, summary="Status of a queued upload")
def upload_status(request: HttpRequest, job_id: Id):
    return selectors.upload_job_get(user=request.auth, job_id=job_id)


@router.post("/uploads/{job_id}/cancel", response={200: UploadJobOut, **ERRORS}, summary="Cancel a queued upload")
def upload_cancel(request: HttpRequest, job_id: Id):
    """Stops a pending or processing upload job (a long scan being read by OCR stops after its current
    page) and stores nothing; a job already done, failed or cancelled is returned as it is."""
    return services.upload_job_cancel(job=selectors.upload_job_get(user=request.auth, job_id=job_id))


# --- Chat ------------------------------------------------------------------------------------


@router.post("/chat/messages", response={201: ChatMessageOut, **ERRORS}, summary="Send a chat message")
def chat_send(request: HttpRequest, payload: ChatMessageIn):
    """Stores the message as a memory and replies as the chat page does: an extractive answer (the
    sentences from your memories that best answer it, each with its memory and chunk; questions you
    typed before are never cited), then the most related memories you already have. A message that
    asks nothing (a note) is kept and gets no answer, only its related memories (`asked` is false)."""
    session = (
        selectors.chat_session_get(user=request.auth, session_id=payload.sessionId)
        if payload.sessionId is not None
        else None
    )
    session, memory = services.chat_message_send(owner=request.auth, content=payload.content, session=session)
    answer = answers.answer_message(user=request.auth, message=memory)
    related = selectors.memory_related(user=request.auth, memory=memory)
    return Status(
        201,
        {
            "session_id": session.pk,
            "memory": memory,
            "asked": answers.asks(memory),
            "answer": answer.sentences,
            "related": related,
        },
    )


@router.get("/chat/sessions", response={200: ChatSessionListOut, **ERRORS}, summary="List chat sessions")
def chat_sessions(request: HttpRequest):
    return {"items": selectors.chat_session_list(user=request.auth)}


@router.get(
    "/chat/sessions/{session_id}",
    response={200: ChatSessionDetailOut, **ERRORS},
    summary="One chat session with its messages",
)
def chat_session(request: HttpRequest, session_id: Id):
    return selectors.chat_session_get(user=request.auth, session_id=session_id)


# --- Trash -----------------------------------------------------------------------------------


@router.get("/trash", response={200: list[TrashedMemoryOut], **ERRORS}, summary="List the trash")
@paginate(LimitOffset, default=settings.KYBERNESIS_API_PAGE_SIZE, maximum=500)
def list_trash(request: HttpRequest):
    """Trashed memories, most recently trashed first, each with when it is purged (purgeAt)."""
    return selectors.trash_list(user=request.auth)


@router.post("/trash/{memory_id}/restore", response={200: MemoryDetailOut, **ERRORS}, summary="Restore from the trash")
def restore_from_trash(request: HttpRequest, memory_id: Id):
    """The memory comes back with its chunks, tags, links and original file, searchable at once. A
    memory that is not in the trash is a 404 saying why (deleted forever, not trashed, unknown)."""
    memory = services.memory_restore_from_trash(owner=request.auth, memory_id=memory_id)
    return selectors.memory_get(user=request.auth, memory_id=memory.pk)


@router.delete("/trash/{memory_id}", response={204: None, **ERRORS}, summary="Delete forever")
def purge_from_trash(request: HttpRequest, memory_id: Id):
    """Delete one trashed memory and its original file for good; there is no undo."""
    services.memory_purge(owner=request.auth, memory_id=memory_id)
    return Status(204, None)


@router.delete("/trash", response={200: TrashEmptiedOut, **ERRORS}, summary="Empty the trash")
def empty_trash(request: HttpRequest):
    """Delete everything in the trash for good; `purged` says how many memories went."""
    return {"purged": services.trash_empty(owner=request.auth)}


# --- Search ----------------------------------------------------------------------------------


@router.post("/search", response={200: SearchOut, **ERRORS}, summary="Hybrid search")
@token_scope("read")  # a read although a POST: the query travels as a body
def search_post(request: HttpRequest, payload: SearchIn):
    """hybridScore = 0.7 · vectorScore + 0.3 · metadataScore. By default (groupBy=memory) there is one
    result per memory: its best passage, with passageCount (how many of its passages match) and up to
    two more of them in morePassages; limit counts memories. groupBy=chunk makes every matching
    passage a result. Only good matches are returned (the rule is in `floor`; minScore replaces it
    with a hybridScore floor, 0 returns every candidate). Chat messages that ask something (kind="question") come
    after the notes. A query of only common words or punctuation returns no results and a reason."""
    return search.hybrid_search(
        request.auth.pk,
        payload.query,
        limit=payload.limit,
        filters=(payload.filters or SearchFiltersIn()).as_search_filters(),
        group_by=payload.groupBy,
        min_score=payload.minScore,
    )


@router.get("/search", response={200: SearchOut, **ERRORS}, summary="Hybrid search (query string)")
def search_get(request: HttpRequest, query: Query[SearchQueryIn]):
    data = query.model_dump()
    filters = SearchFiltersIn(
        tags=data.pop("tag") or None,
        source=data.pop("source") or None,
        tiers=data.pop("tier") or None,
        **{k: data.pop(k) for k in list(data) if k not in ("q", "limit", "groupBy", "minScore")},
    )
    return search.hybrid_search(
        request.auth.pk,
        data["q"],
        limit=data["limit"],
        filters=filters.as_search_filters(),
        group_by=data["groupBy"],
        min_score=data["minScore"],
    )
