"""Reads of memories: owner-scoped lists and lookups. Hybrid search lives in memories.search."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Count, F, FilteredRelation, Q, QuerySet, Value
from django.db.models.functions import Coalesce, Lower
from django.shortcuts import get_object_or_404
from django.utils import timezone

from memories import search
from memories.models import (
    ChatSession,
    ConsumedFile,
    ConsumeWatcher,
    ImportJob,
    Memory,
    MemoryChunk,
    Original,
    TierMove,
    UploadJob,
)
from memories.tag_rules import filter_tags

MEMORY_SORTS = {
    "created": ("-created_at", "-id"),
    "updated": ("-updated_at", "-id"),
    "priority": ("-priority", "-created_at", "-id"),
    "title": (Lower("title"), "id"),
    "accessed": (F("last_accessed_at").desc(nulls_last=True), "-created_at", "-id"),
}


def with_chunk_count(qs: QuerySet[Memory]) -> QuerySet[Memory]:
    """Each memory's chunk count, as `chunk_count`. The chunks are joined on the owner as well as the
    memory, so the chunk table is read owner-first (docs/scaling.md, "Past one database")."""
    return qs.annotate(  # type: ignore[no-redef]  # fills the chunk_count that Memory declares for the services
        owned_chunks=FilteredRelation("chunks", condition=Q(chunks__owner_id=F("owner_id"))),
        chunk_count=Count("owned_chunks"),
    )


def memory_list(
    *,
    user,
    tier: str | None = None,
    source: str | None = None,
    tags: list[str] | None = None,
    sort: str | None = None,
    language: str | None = None,
) -> QuerySet[Memory]:
    """The user's memories with chunk counts, newest first unless `sort` names one of MEMORY_SORTS;
    content is deferred. `language` is a code checked by core.language.parse_language_code ("" for
    memories whose language is unknown, None for any)."""
    order = MEMORY_SORTS.get(sort or "created", MEMORY_SORTS["created"])
    qs = with_chunk_count(Memory.objects.for_user(user).defer("content").select_related("original")).order_by(
        *order
    )  # Meta.ordering is not applied to GROUP BY queries
    if tier:
        qs = qs.filter(tier=tier)
    if source:
        qs = qs.filter(source=source)
    if wanted := filter_tags(tags):
        qs = qs.filter(tags__contains=list(wanted))
    if language is not None:
        qs = qs.filter(language=language)
    return qs


def memory_languages(*, user) -> list[tuple[str, int]]:
    """The languages of the user's memories as (code, count), most used first; "" counts those whose
    language is unknown (rows not read yet count there too until the sleep agent reads them)."""
    rows = (
        Memory.objects.for_user(user)
        .annotate(code=Coalesce("language", Value("")))
        .values("code")
        .annotate(count=Count("id"))
        .order_by("-count", "code")
    )
    return [(row["code"], row["count"]) for row in rows]


def memory_chunk_languages(*, memory: Memory) -> list[tuple[str, int]]:
    """The languages of a memory's chunks as (code, chunk count), most chunks first; "" is unknown."""
    rows = (
        MemoryChunk.objects.filter(owner_id=memory.owner_id, memory=memory)
        .annotate(code=Coalesce("language", Value("")))
        .values("code")
        .annotate(count=Count("id"))
        .order_by("-count", "code")
    )
    return [(row["code"], row["count"]) for row in rows]


def memory_get(*, user, memory_id: int) -> Memory:
    """One of the user's memories with its chunk count; another user's memory is a 404."""
    return get_object_or_404(with_chunk_count(Memory.objects.for_user(user).select_related("original")), pk=memory_id)


def trash_list(*, user) -> QuerySet[Memory]:
    """The user's trash, most recently trashed first, with chunk counts; content is deferred. The only
    list that reads trashed memories (Memory.all_objects)."""
    return with_chunk_count(
        Memory.all_objects.for_user(user).trashed().defer("content").select_related("original")
    ).order_by("-trashed_at", "-id")


def trash_count(*, user) -> int:
    return Memory.all_objects.for_user(user).trashed().count()


def memory_original(*, memory: Memory) -> Original | None:
    """The memory's kept original, or None (select_related by memory_get, so usually no query)."""
    try:
        return memory.original
    except Original.DoesNotExist:
        return None


def memory_original_get(*, user, memory_id: int) -> Original:
    """The original file of one of the user's memories; another user's memory, or one without a kept
    original, is a 404."""
    return get_object_or_404(Original.objects.for_user(user).filter(memory__trashed_at=None), memory_id=memory_id)


CHUNKS_PER_PAGE = 20


def memory_chunk_page(*, memory: Memory, page=None, chunk=None, per_page: int = CHUNKS_PER_PAGE):
    """One page of a memory's chunks in order. `chunk` (a 0-based position) picks the page that holds it,
    so a link to chunk N opens the right page even when N is far down a long memory."""
    qs = (
        MemoryChunk.objects.filter(owner_id=memory.owner_id, memory=memory)
        .only("position", "text", "char_start", "char_end", "tier", "language")
        .order_by("position")
    )
    paginator = Paginator(qs, per_page)
    try:
        position = int(chunk) if chunk not in (None, "") else None
    except (TypeError, ValueError):
        position = None
    if position is not None and position >= 0:
        return paginator.get_page(position // per_page + 1)
    return paginator.get_page(page)


def memory_tier_counts(*, user) -> dict[str, int]:
    """How many of the user's memories sit in each tier (every tier present, zeros included)."""
    counts = dict.fromkeys(("hot", "warm", "archive"), 0)
    for row in Memory.objects.for_user(user).values("tier").annotate(n=Count("id")):
        counts[row["tier"]] = row["n"]
    return counts


def memory_tier_history(*, memory: Memory, limit: int = 50) -> QuerySet[TierMove]:
    """The memory's moves between tiers, newest first."""
    return TierMove.objects.filter(memory=memory).order_by("-moved_at", "-id")[:limit]


def tag_counts(*, user, prefix: str = "", limit: int = 500) -> list[dict]:
    """The user's tags (combined: manual and auto) with how many memories carry each, most used first.

    Each item is {"tag", "count", "manual"}; `manual` counts the memories where the tag is manual.
    The prefix is normalised like a stored tag.
    """
    prefix = (filter_tags([prefix]) or ("",))[0][:64]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.tag, count(*) AS n, count(*) FILTER (WHERE t.tag = ANY(m.manual_tags)) AS manual
            FROM memories_memory m CROSS JOIN LATERAL unnest(m.tags) AS t(tag)
            WHERE m.owner_id = %s AND m.trashed_at IS NULL AND t.tag LIKE %s
            GROUP BY t.tag ORDER BY n DESC, t.tag LIMIT %s
            """,
            [user.pk, prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%", limit],
        )
        return [{"tag": tag, "count": n, "manual": manual} for tag, n, manual in cursor.fetchall()]


def memory_related(
    *, user, memory: Memory, limit: int = 5, min_score: float | None = None, exclude_memory_ids=()
) -> list[dict]:
    """The user's other memories related to this one (a chat message), as hybrid search ranks them with
    the message as the query: the same relevance floor as search, never the memory itself, and
    questions after the notes.

    Each item is {"memory": Memory, "snippet": str, "score": hybridScore, "chunkIndex": int,
    "url": link to the matched chunk, "kind": "" or "question"}. The message's own first-chunk vector
    is the query vector, so nothing is embedded again when a session is shown.
    """
    anchor = list(
        MemoryChunk.objects.filter(owner_id=memory.owner_id, memory=memory)
        .order_by("position")
        .values_list("embedding", flat=True)[:1]
    )
    if not anchor or not memory.content.strip():
        return []
    response = search.hybrid_search(
        user.pk if hasattr(user, "pk") else user,
        memory.content[: search.MAX_QUERY_CHARS],
        limit=limit,
        group_by="memory",
        query_vector=anchor[0],
        min_score=min_score,
        exclude_memory_ids=(memory.pk, *exclude_memory_ids),
    )
    memories = Memory.objects.in_bulk([r.memory_id for r in response.results])
    return [
        {
            "memory": memories[r.memory_id],
            "snippet": _snippet(r.text),
            "score": r.hybrid_score,
            "chunkIndex": r.chunk_index,
            "url": r.url,
            "kind": r.kind,
        }
        for r in response.results
        if r.memory_id in memories
    ]


def _snippet(text: str, max_chars: int = 220) -> str:
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[:max_chars].rsplit(" ", 1)[0] + "…"


def chat_session_list(*, user) -> QuerySet[ChatSession]:
    return ChatSession.objects.for_user(user).order_by("-updated_at", "-id")


def chat_session_get(*, user, session_id: int) -> ChatSession:
    return get_object_or_404(ChatSession.objects.for_user(user), pk=session_id)


def chat_session_messages(*, session: ChatSession) -> QuerySet[Memory]:
    """The session's messages, oldest first (they are memories with source=chat)."""
    return with_chunk_count(
        Memory.objects.filter(owner_id=session.owner_id, source="chat", metadata__sessionId=session.pk)
    ).order_by("created_at", "id")


def chat_session_exchanges(*, session: ChatSession) -> list[dict]:
    """Each message of a session with the related memories the reply shows for it. A reply is read
    again each time the session is shown, so it leaves out the session's later messages: the reply
    to a note never lists the question asked after it."""
    messages = list(chat_session_messages(session=session))
    return [
        {
            "message": message,
            # A conversation imported from an assistant (ChatGPT, Claude) is shown as it was, its own
            # answers after each message; only messages written here get related memories.
            "related": []
            if message.metadata.get("importedFrom")
            else memory_related(
                user=session.owner_id, memory=message, exclude_memory_ids=[m.pk for m in messages[i + 1 :]]
            ),
        }
        for i, message in enumerate(messages)
    ]


def upload_job_get(*, user, job_id: int) -> UploadJob:
    return get_object_or_404(UploadJob.objects.for_user(user).select_related("memory"), pk=job_id)


def upload_jobs_active(*, user, limit: int = 50) -> list[UploadJob]:
    """The user's uploads still waiting for or in the worker, newest first (the upload page lists them)."""
    active = (UploadJob.Status.PENDING, UploadJob.Status.PROCESSING)
    return list(UploadJob.objects.for_user(user).filter(status__in=active).select_related("memory")[:limit])


def import_job_get(*, user, job_id: int) -> ImportJob:
    """One of the user's import jobs; anyone else's is a 404."""
    return get_object_or_404(ImportJob.objects.for_user(user), pk=job_id)


def import_job_list(*, user, limit: int = 20) -> QuerySet[ImportJob]:
    return ImportJob.objects.for_user(user).order_by("-created_at", "-id")[:limit]


@dataclass
class ConsumeFolderStatus:
    """The watched folder as the upload page tells one person about it."""

    folder: str  # where this person drops files (the folder, or their subfolder of it)
    account: str
    per_account: bool  # one subfolder per account, rather than one folder for one account
    exists: bool
    running: bool
    mode: str
    seen_at: datetime | None
    waiting: int
    processing: int
    error: str
    last_failed: ConsumedFile | None
    counts: dict[str, int]  # filed in the last day, by status


def consume_folder_status(*, user) -> ConsumeFolderStatus | None:
    """The watched folder of this person (None: there is none, or it files into another account): its
    files waiting and being read, whether the watcher is running, its last error, and what it filed
    in the last day."""
    from memories.consume.watcher import ALIVE_S

    raw = settings.KYBERNESIS_CONSUME_DIR
    if not raw or not getattr(user, "is_authenticated", False):
        return None
    top = Path(raw).expanduser().absolute()
    account = settings.KYBERNESIS_CONSUME_USER
    if account:
        if account != user.get_username() and account.lower() != (user.email or "").lower():
            return None
        root = top
    else:
        named = [top / user.get_username(), *([top / user.email] if user.email else [])]
        root = next((path for path in named if path.is_dir() and not path.is_symlink()), named[0])
    watcher = ConsumeWatcher.objects.filter(folder=str(top)).first()
    now = timezone.now()
    running = bool(
        watcher and not watcher.stopped and watcher.seen_at and watcher.seen_at > now - timedelta(seconds=ALIVE_S)
    )
    inbox = (watcher.inboxes.get(str(root)) if watcher else None) or {}
    mine = ConsumedFile.objects.for_user(user).filter(filed=True)
    counts = dict(
        mine.filter(updated_at__gte=now - timedelta(days=1)).values_list("status").annotate(n=Count("id")).order_by()
    )
    return ConsumeFolderStatus(
        folder=str(root),
        account=user.get_username(),
        per_account=not account,
        exists=root.is_dir(),
        running=running,
        mode=watcher.mode if watcher else "",
        seen_at=watcher.seen_at if watcher else None,
        waiting=int(inbox.get("waiting", 0)),
        processing=int(inbox.get("processing", 0)),
        error=(watcher.error if watcher else "") or str(inbox.get("problem", "")),
        last_failed=mine.filter(status=ConsumedFile.Status.FAILED).order_by("-updated_at").first(),
        counts=counts,
    )


MAIL_THREAD_SHOWN = 50


def memory_mail(*, memory: Memory) -> dict | None:
    """What the memory page shows of a mail (metadata["mail"], kept by mail imports): its headers, the
    messages of its thread in the order they were written, its attachments, or, for an attachment,
    the messages it came with. None for a memory that is not mail."""
    mail = (memory.metadata or {}).get("mail")
    if not isinstance(mail, dict):
        return None
    owned = Memory.objects.filter(owner_id=memory.owner_id).only("pk", "title", "created_at", "metadata")
    thread, attachments, messages = [], [], []
    thread_count = 0
    if isinstance(mail.get("attachmentOf"), str):
        sha = (memory.metadata or {}).get("sha256")
        messages = list(
            owned.filter(metadata__mail__attachments__contains=[{"sha256": sha}])
            if isinstance(sha, str)
            else owned.filter(metadata__mail__key=mail["attachmentOf"])
        )[:MAIL_THREAD_SHOWN]
    else:
        if isinstance(mail.get("threadId"), str) and mail["threadId"]:
            in_thread = owned.filter(metadata__mail__threadId=mail["threadId"]).exclude(
                metadata__mail__has_key="attachmentOf"
            )
            thread_count = in_thread.count()
            thread = list(in_thread.order_by("created_at", "pk")[:MAIL_THREAD_SHOWN])
        shas = [a["sha256"] for a in mail.get("attachments") or [] if isinstance(a, dict) and "sha256" in a]
        if shas:
            attachments = list(owned.filter(metadata__sha256__in=shas).order_by("title", "pk"))
    return {
        "from": mail.get("from", ""),
        "to": ", ".join(mail.get("to") or []),
        "cc": ", ".join(mail.get("cc") or []),
        "labels": ", ".join(mail.get("labels") or []),
        "thread": thread if thread_count > 1 else [],
        "thread_count": thread_count,
        "attachments": attachments,
        "messages": messages,
    }
