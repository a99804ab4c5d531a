"""Writes to memories: create (single and batch), update, delete. Each one is atomic."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django_q.tasks import async_task
from psycopg.types.json import Jsonb

from memories import embedding, lexical, tiering
from memories.chunking import Chunk, chunk_text
from memories.extraction import ExtractionError, extract
from memories.models import ApiToken, ChatSession, Memory, MemoryChunk, Source, TierMove, UploadJob, content_hash
from memories.tagging import TagError, auto_tags_for, auto_tags_many, needs_retag, normalize_tag, normalize_tags

logger = logging.getLogger(__name__)

MAX_TITLE_CHARS = 500
MAX_METADATA_BYTES = 64 * 1024
MAX_MANUAL_TAGS = 50
# Set by memory_archive when a connector's item is gone at its source; it keeps the memory archived.
ARCHIVED_REASON = "archivedReason"
_UNSET = object()
TOKEN_PREFIX = "kyb_"
_TOKEN_LAST_USED_RESOLUTION = timedelta(minutes=1)


class MemoryInputError(ValueError):
    """Input that cannot become a memory. `status` is the HTTP status a front door should answer with."""

    status = 422

    def __init__(self, message: str, *, field: str | None = None, index: int | None = None):
        self.field = field
        self.index = index
        prefix = f"item {index}: " if index is not None else ""
        super().__init__(prefix + message)


class MemoryTooLargeError(MemoryInputError):
    status = 413


class TagNotFoundError(MemoryInputError):
    status = 404


@dataclass
class MemoryInput:
    title: str
    content: str
    source: str = Source.UPLOAD
    priority: float | None = None
    metadata: dict = field(default_factory=dict)
    manual_tags: Sequence[str] = ()


@dataclass
class _Prepared:
    title: str
    content: str
    source: str
    priority: float
    metadata: dict
    manual_tags: list[str]
    chunks: list[Chunk]


def _clean_title(title, content: str, *, index: int | None) -> str:
    if title is None:
        title = ""
    if not isinstance(title, str):
        raise MemoryInputError("title must be a string", field="title", index=index)
    title = " ".join(title.split())
    if not title:
        # No title given: the first line of the content, shortened at a word.
        first_line = content.strip().splitlines()[0].strip()
        title = first_line if len(first_line) <= 80 else first_line[:80].rsplit(" ", 1)[0] + "…"
    if len(title) > MAX_TITLE_CHARS:
        raise MemoryInputError(f"title is {len(title)} characters; the limit is {MAX_TITLE_CHARS}",
                               field="title", index=index)
    return title


def _clean_content(content, *, index: int | None) -> str:
    if not isinstance(content, str):
        raise MemoryInputError("content must be a string", field="content", index=index)
    if "\x00" in content:
        raise MemoryInputError("content contains NUL bytes; is it a binary file?", field="content", index=index)
    if not content.strip():
        raise MemoryInputError("content is empty", field="content", index=index)
    limit = settings.KYBERNESIS_MAX_MEMORY_CHARS
    if len(content) > limit:
        raise MemoryTooLargeError(f"content is {len(content):,} characters; the limit is {limit:,}",
                                  field="content", index=index)
    return content


def _clean_priority(priority, *, index: int | None) -> float | None:
    """A priority the caller gave, or None for the computed default (tiering.default_priority)."""
    if priority is None:
        return None
    if isinstance(priority, bool) or not isinstance(priority, (int, float)):
        raise MemoryInputError("priority must be a number from 0 to 1", field="priority", index=index)
    if not 0.0 <= float(priority) <= 1.0:
        raise MemoryInputError(f"priority must be from 0 to 1, got {priority}", field="priority", index=index)
    return float(priority)


def _clean_source(source, *, index: int | None) -> str:
    if source not in Source.values:
        raise MemoryInputError(f"source must be one of {', '.join(Source.values)}; got {source!r}",
                               field="source", index=index)
    return Source(source).value


def _clean_metadata(metadata, *, index: int | None) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise MemoryInputError("metadata must be a JSON object", field="metadata", index=index)
    try:
        size = len(json.dumps(metadata).encode())
    except (TypeError, ValueError) as exc:
        raise MemoryInputError(f"metadata is not JSON-serialisable: {exc}", field="metadata", index=index) from exc
    if size > MAX_METADATA_BYTES:
        raise MemoryInputError(f"metadata is {size:,} bytes; the limit is {MAX_METADATA_BYTES:,}",
                               field="metadata", index=index)
    return metadata


def _clean_tags(tags, *, index: int | None) -> list[str]:
    try:
        return normalize_tags(tags, limit=MAX_MANUAL_TAGS)
    except TagError as exc:
        raise MemoryInputError(str(exc), field="tags", index=index) from exc


def _chunks_for(content: str) -> list[Chunk]:
    return chunk_text(content, max_chars=settings.KYBERNESIS_CHUNK_SIZE, overlap=settings.KYBERNESIS_CHUNK_OVERLAP)


def _prepare(item: MemoryInput, *, index: int | None) -> _Prepared:
    content = _clean_content(item.content, index=index)
    source = _clean_source(item.source, index=index)
    manual_tags = _clean_tags(item.manual_tags, index=index)
    priority = _clean_priority(item.priority, index=index)
    if priority is None:
        priority = tiering.default_priority(source=source, manual_tag_count=len(manual_tags),
                                            content_chars=len(content))
    return _Prepared(
        title=_clean_title(item.title, content, index=index),
        content=content,
        source=source,
        priority=priority,
        metadata=_clean_metadata(item.metadata, index=index),
        manual_tags=manual_tags,
        chunks=_chunks_for(content),
    )


def _chunk_rows(memory: Memory, chunks: Sequence[Chunk], vectors) -> list[MemoryChunk]:
    return [
        MemoryChunk(
            owner_id=memory.owner_id,
            memory=memory,
            position=chunk.position,
            text=chunk.text,
            char_start=chunk.char_start,
            char_end=chunk.char_end,
            text_hash=content_hash(chunk.text),
            embedding=vector,
            tier=memory.tier,
        )
        for chunk, vector in zip(chunks, vectors, strict=True)
    ]


def memory_create(
    *,
    owner,
    title: str | None,
    content: str,
    source: str = Source.UPLOAD,
    priority: float | None = None,
    metadata: dict | None = None,
    manual_tags: Sequence[str] = (),
) -> Memory:
    """Validate, chunk, embed and store one memory with all its chunks, or nothing."""
    item = MemoryInput(title=title, content=content, source=source, priority=priority,
                       metadata=metadata or {}, manual_tags=manual_tags)
    return memory_create_many(owner=owner, items=[item], _single=True)[0]


def memory_create_many(*, owner, items: Sequence[MemoryInput], _single: bool = False) -> list[Memory]:
    """Store several memories, embedding all their chunks in one pass. One bad item refuses them all."""
    limit = settings.KYBERNESIS_MAX_BATCH_ITEMS
    if len(items) > limit:
        raise MemoryInputError(f"a batch holds at most {limit} items; got {len(items)}", field="items")
    prepared = [_prepare(item, index=None if _single else i) for i, item in enumerate(items)]
    if not prepared:
        return []

    # Embedding is the slow part, so it happens before the transaction opens; nothing is written
    # unless every vector was computed.
    texts = [chunk.text for p in prepared for chunk in p.chunks]
    vectors = embedding.embed_texts(texts)

    now = timezone.now()
    policy = tiering.TierPolicy.from_settings()
    memories = []
    for p in prepared:
        memory = Memory(
            owner=owner,
            title=p.title,
            content=p.content,
            source=p.source,
            priority=p.priority,
            metadata=p.metadata,
            manual_tags=p.manual_tags,
            created_at=now,
            updated_at=now,
            tier_changed_at=now,
        )
        _autotag(memory, now=now)
        decision = tiering.evaluate_tier(_tier_facts(memory), now=now, policy=policy)
        memory.tier, memory.decay_score, memory.tier_reason = decision.tier, decision.decay, decision.reason
        memories.append(memory)

    with transaction.atomic():
        Memory.objects.bulk_create(memories)
        rows: list[MemoryChunk] = []
        offset = 0
        for memory, p in zip(memories, prepared, strict=True):
            rows.extend(_chunk_rows(memory, p.chunks, vectors[offset:offset + len(p.chunks)]))
            offset += len(p.chunks)
        MemoryChunk.objects.bulk_create(rows, batch_size=500)
        lexical.index_memories(owner_id=owner.pk, memory_ids=[m.pk for m in memories])
        transaction.on_commit(lambda: async_task("graph.tasks.extract_memories", [m.pk for m in memories]))
    for memory, p in zip(memories, prepared, strict=True):
        memory.chunk_count = len(p.chunks)
    return memories


def memory_update(
    *,
    memory: Memory,
    title=_UNSET,
    content=_UNSET,
    source=_UNSET,
    priority=_UNSET,
    metadata=_UNSET,
    manual_tags=_UNSET,
) -> Memory:
    """Change a memory. Content is re-chunked only when its hash changed, and unchanged chunk
    texts keep their embeddings, so only new text is embedded."""
    changes: dict = {}
    if content is not _UNSET:
        changes["content"] = _clean_content(content, index=None)
    if title is not _UNSET:
        changes["title"] = _clean_title(title, changes.get("content", memory.content), index=None)
    if source is not _UNSET:
        changes["source"] = _clean_source(source, index=None)
    if priority is not _UNSET:
        if priority is None:
            raise MemoryInputError("priority must be a number from 0 to 1", field="priority")
        changes["priority"] = _clean_priority(priority, index=None)
    if metadata is not _UNSET:
        changes["metadata"] = _clean_metadata(metadata, index=None)
    if manual_tags is not _UNSET:
        changes["manual_tags"] = _clean_tags(manual_tags, index=None)

    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        rechunk = "content" in changes and content_hash(changes["content"]) != locked.content_hash
        edited = any(getattr(locked, name) != changes[name] for name in ("title", "content", "metadata") if name in changes)
        for name, value in changes.items():
            setattr(locked, name, value)
        if edited:
            locked.edited_at = timezone.now()
        if rechunk or "metadata" in changes or "source" in changes:
            _autotag(locked, now=timezone.now())
        if rechunk:
            _replace_chunks(locked)
            transaction.on_commit(lambda: async_task("graph.tasks.extract_memories", [locked.pk]))
        locked.save()
        if {"priority", "manual_tags", "metadata"} & changes.keys():
            memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.EDIT)
            locked.refresh_from_db()
    locked.chunk_count = locked.chunks.count()
    return locked


def _replace_chunks(memory: Memory) -> None:
    chunks = _chunks_for(memory.content)
    known = {
        row.text_hash: row.embedding
        for row in MemoryChunk.objects.filter(memory=memory).only("text_hash", "embedding")
    }
    hashes = [content_hash(chunk.text) for chunk in chunks]
    missing = [i for i, h in enumerate(hashes) if h not in known]
    fresh = embedding.embed_texts([chunks[i].text for i in missing])
    fresh_by_index = dict(zip(missing, fresh, strict=True))
    vectors = [fresh_by_index[i] if i in fresh_by_index else known[h] for i, h in enumerate(hashes)]
    lexical.unindex_memories(memory_ids=[memory.pk])
    MemoryChunk.objects.filter(memory=memory).delete()
    MemoryChunk.objects.bulk_create(_chunk_rows(memory, chunks, vectors), batch_size=500)
    lexical.index_memories(owner_id=memory.owner_id, memory_ids=[memory.pk])


def memory_archive(*, memory: Memory, reason: str) -> Memory:
    """Archive a memory whose source is gone, noting why in metadata["archivedReason"]. The tier rules
    keep it archived (unless pinned) until that note is removed, e.g. when the file is restored."""
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        locked.metadata = {**locked.metadata, ARCHIVED_REASON: reason}
        locked.save(update_fields=["metadata", "updated_at"])
        memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.CONNECTOR)
    return _reloaded(locked)


def memory_delete(*, memory: Memory) -> None:
    """Remove a memory; its chunks and their lexical postings go with it (see memories.signals)."""
    with transaction.atomic():
        memory.delete()



# --- Tags ------------------------------------------------------------------------------------------


def _autotag(memory: Memory, *, now) -> None:
    _apply_auto_tags(memory, auto_tags_for(source=memory.source, metadata=memory.metadata, content=memory.content,
                                           summary=memory.summary), now=now)


def _apply_auto_tags(memory: Memory, tags: list[dict], *, now) -> None:
    memory.auto_tags = tags
    memory.auto_tagged_at = now
    memory.sync_derived_fields()
    memory.auto_tagged_hash = memory.content_hash


@dataclass
class BatchResult:
    """What a bulk service did to a batch: `failed` names each memory that could not be processed."""

    processed: int = 0
    changed: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)


def memories_autotag(*, memory_ids: Sequence[int], now=None, force: bool = False) -> BatchResult:
    """Regenerate auto tags for the memories that are due (tagged over 7 days ago, or whose content
    changed since), or for all of them with `force`. Manual tags are never touched. A memory that
    fails is reported and the others are still tagged."""
    now = now or timezone.now()
    result = BatchResult()
    fields = ("id", "source", "metadata", "content", "summary", "manual_tags", "auto_tags", "auto_tagged_at",
              "auto_tagged_hash", "content_hash")
    memories = list(Memory.objects.filter(pk__in=list(memory_ids)).only(*fields).order_by("pk"))
    result.processed = len(memories)
    due = [memory for memory in memories
           if force or needs_retag(auto_tagged_at=memory.auto_tagged_at, auto_tagged_hash=memory.auto_tagged_hash,
                                   content_hash=memory.content_hash, now=now)]
    outcomes = auto_tags_many([(m.source, m.metadata, m.content, m.summary) for m in due])
    tagged: list[Memory] = []
    for memory, outcome in zip(due, outcomes, strict=True):
        if isinstance(outcome, str):
            result.failed.append((memory.pk, outcome))
            continue
        before = memory.auto_tags
        _apply_auto_tags(memory, outcome, now=now)
        result.changed += memory.auto_tags != before
        tagged.append(memory)
    if tagged:
        # One statement for the batch (bulk_update's CASE per row is slow at hundreds of rows).
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memories_memory m SET auto_tags = v.auto_tags, auto_tagged_at = %s, auto_tagged_hash = v.hash, "
                "tags = ARRAY(SELECT jsonb_array_elements_text(v.tags)) "
                "FROM unnest(%s::bigint[], %s::jsonb[], %s::jsonb[], %s::text[]) AS v(id, auto_tags, tags, hash) "
                "WHERE m.id = v.id",
                [now, [m.pk for m in tagged], [Jsonb(m.auto_tags) for m in tagged], [Jsonb(m.tags) for m in tagged],
                 [m.auto_tagged_hash for m in tagged]])
    return result


def memory_tags_add(*, memory: Memory, tags) -> Memory:
    """Add manual tags (normalised; ones it already has are ignored), up to 50 in all."""
    try:
        new = normalize_tags(tags, limit=MAX_MANUAL_TAGS)
    except TagError as exc:
        raise MemoryInputError(str(exc), field="tags") from None
    if not new:
        raise MemoryInputError("give at least one tag", field="tags")
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        combined = [*locked.manual_tags, *(t for t in new if t not in locked.manual_tags)]
        if len(combined) > MAX_MANUAL_TAGS:
            raise MemoryInputError(f"a memory can have at most {MAX_MANUAL_TAGS} manual tags; it has "
                                   f"{len(locked.manual_tags)} and {len(combined) - len(locked.manual_tags)} "
                                   "more were given", field="tags")
        if combined != locked.manual_tags:
            locked.manual_tags = combined
            locked.save(update_fields=["manual_tags", "updated_at"])
            memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.EDIT)
    return _reloaded(locked)


def memory_tag_remove(*, memory: Memory, tag: str) -> Memory:
    """Remove one manual tag. Auto tags cannot be removed this way: the system owns them."""
    try:
        tag = normalize_tag(tag)
    except TagError as exc:
        raise MemoryInputError(str(exc), field="tag") from None
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        if tag not in locked.manual_tags:
            raise TagNotFoundError(f"this memory has no manual tag '{tag}'", field="tag")
        locked.manual_tags = [t for t in locked.manual_tags if t != tag]
        locked.save(update_fields=["manual_tags", "updated_at"])
        memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.EDIT)
    return _reloaded(locked)


def _reloaded(memory: Memory) -> Memory:
    memory.refresh_from_db()
    memory.chunk_count = memory.chunks.count()
    return memory


def memory_summaries_save(*, summaries: dict[int, tuple[str, str, str]]) -> int:
    """Store sleep-agent summaries: {memory id: (summary, preview, content hash it was made from)}.
    A memory whose content changed since is left for the next cycle."""
    if not summaries:
        return 0
    memories = list(Memory.objects.filter(pk__in=list(summaries)).only("pk", "content_hash"))
    for memory in memories:
        memory.summary, memory.preview, memory.summarized_hash = summaries[memory.pk]
    fresh = [m for m in memories if m.summarized_hash == m.content_hash]
    Memory.objects.bulk_update(fresh, ["summary", "preview", "summarized_hash"], batch_size=500)
    return len(fresh)


# --- Tiers ------------------------------------------------------------------------------------------


def _tier_facts(memory: Memory, *, relationships: int = 0, recent_connections: int = 0) -> tiering.TierFacts:
    return tiering.TierFacts(
        tier=memory.tier, priority=memory.priority, pinned=memory.pinned, has_manual_tags=bool(memory.manual_tags),
        created_at=memory.created_at, last_accessed_at=memory.last_accessed_at, access_count=memory.access_count,
        relationships=relationships, recent_connections=recent_connections,
        removed_at_source=ARCHIVED_REASON in memory.metadata,
    )


# One round trip gathers the facts of a batch of memories, link counts included. A link counts once
# per linked memory whatever its reason; it is recent when created or reinforced since `recent_since`.
_TIER_FACTS_SQL = """
WITH batch AS (
    SELECT id FROM memories_memory WHERE {where} ORDER BY id LIMIT %(batch_size)s
), links AS (
    SELECT l.source_id AS memory_id, l.target_id AS other_id, GREATEST(l.created_at, l.last_reinforced_at) AS seen
    FROM graph_memorylink l WHERE l.source_id IN (SELECT id FROM batch)
    UNION ALL
    SELECT l.target_id, l.source_id, GREATEST(l.created_at, l.last_reinforced_at)
    FROM graph_memorylink l WHERE l.target_id IN (SELECT id FROM batch)
), counts AS (
    SELECT memory_id, count(DISTINCT other_id) AS relationships,
           count(DISTINCT other_id) FILTER (WHERE seen >= %(recent_since)s) AS recent
    FROM links GROUP BY memory_id
)
SELECT m.id, m.owner_id, m.tier, m.priority, m.pinned, cardinality(m.manual_tags) > 0, m.created_at,
       m.last_accessed_at, m.access_count, m.decay_score, m.tier_reason,
       (m.metadata -> 'archivedReason') IS NOT NULL,
       COALESCE(c.relationships, 0), COALESCE(c.recent, 0)
FROM batch JOIN memories_memory m ON m.id = batch.id LEFT JOIN counts c ON c.memory_id = m.id
ORDER BY m.id
"""

_APPLY_TIERS_SQL = """
UPDATE memories_memory m SET tier = v.tier, decay_score = v.decay, tier_reason = v.reason,
       tier_changed_at = CASE WHEN m.tier <> v.tier THEN %(now)s ELSE m.tier_changed_at END
FROM unnest(%(ids)s::bigint[], %(tiers)s::text[], %(decays)s::float8[], %(reasons)s::text[]) AS v(id, tier, decay, reason)
WHERE m.id = v.id
"""

_CHUNK_TIERS_SQL = """
UPDATE memories_memorychunk c SET tier = v.tier
FROM unnest(%(ids)s::bigint[], %(tiers)s::text[]) AS v(id, tier)
WHERE c.memory_id = v.id AND c.tier <> v.tier
"""


@dataclass
class RetierResult(BatchResult):
    moved: int = 0
    moves: dict[str, int] = field(default_factory=dict)  # "hot→warm": count
    last_id: int | None = None


def memories_retier(*, owner=None, memory_ids: Sequence[int] | None = None, after_id: int = 0,
                    batch_size: int = 5000, now=None, cause: str = TierMove.Cause.SLEEP) -> RetierResult:
    """Recompute decay and tier for one batch of memories, set-based: one query reads the facts of up
    to `batch_size` memories (by id, after `after_id`), the policy runs in Python, and three
    statements write the changed memories, move their chunks, and record each move. Callers walk a
    whole collection by passing the returned `last_id` as the next `after_id`."""
    now = now or timezone.now()
    policy = tiering.TierPolicy.from_settings()
    params: dict = {"batch_size": batch_size, "after_id": after_id,
                    "recent_since": now - timedelta(days=policy.recent_connection_days)}
    where = ["id > %(after_id)s"]
    if owner is not None:
        params["owner"] = owner.pk
        where.append("owner_id = %(owner)s")
    if memory_ids is not None:
        params["memory_ids"] = list(memory_ids)
        where.append("id = ANY(%(memory_ids)s)")
    result = RetierResult()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_TIER_FACTS_SQL.format(where=" AND ".join(where)), params)
            rows = cursor.fetchall()
        changed: list[tuple] = []
        moves: list[TierMove] = []
        for (memory_id, owner_id, tier, priority, pinned, has_manual, created_at, last_accessed_at, access_count,
             decay, reason, removed, relationships, recent) in rows:
            facts = tiering.TierFacts(tier=tier, priority=priority, pinned=pinned, has_manual_tags=has_manual,
                                      created_at=created_at, last_accessed_at=last_accessed_at,
                                      access_count=access_count, relationships=relationships,
                                      recent_connections=recent, removed_at_source=removed)
            decision = tiering.evaluate_tier(facts, now=now, policy=policy)
            result.processed += 1
            result.last_id = memory_id
            if decision.tier != tier:
                moves.append(TierMove(owner_id=owner_id, memory_id=memory_id, from_tier=tier, to_tier=decision.tier,
                                      reason=decision.reason[:200], cause=cause, moved_at=now))
                key = f"{tier}→{decision.tier}"
                result.moves[key] = result.moves.get(key, 0) + 1
            if decision.tier != tier or abs(decision.decay - decay) >= 0.0005 or decision.reason != reason:
                changed.append((memory_id, decision.tier, decision.decay, decision.reason[:200]))
        if changed:
            ids, tiers, decays, reasons = (list(column) for column in zip(*changed, strict=True))
            with connection.cursor() as cursor:
                cursor.execute(_APPLY_TIERS_SQL, {"ids": ids, "tiers": tiers, "decays": decays,
                                                  "reasons": reasons, "now": now})
        if moves:
            with connection.cursor() as cursor:
                cursor.execute(_CHUNK_TIERS_SQL, {"ids": [m.memory_id for m in moves],
                                                  "tiers": [m.to_tier for m in moves]})
            TierMove.objects.bulk_create(moves, batch_size=1000)
    result.changed = len(changed)
    result.moved = len(moves)
    return result


def memory_retier(*, memory: Memory, cause: str = TierMove.Cause.SLEEP) -> Memory:
    """Evaluate one memory's tier now; its chunks follow in the same transaction."""
    memories_retier(memory_ids=[memory.pk], cause=cause)
    return _reloaded(memory)


def memory_pin(*, memory: Memory, pinned: bool) -> Memory:
    """Pin (the memory moves to hot at once and stays there) or unpin (the rules decide again)."""
    with transaction.atomic():
        Memory.objects.filter(pk=memory.pk).update(pinned=pinned, updated_at=timezone.now())
        memories_retier(memory_ids=[memory.pk], cause=TierMove.Cause.PIN)
    return _reloaded(memory)


def api_token_create(*, user, name: str = "") -> tuple[ApiToken, str]:
    """Create a token for user. Returns the row and the plain token, which is not stored anywhere."""
    key = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name[:100], prefix=key[:12], key_hash=ApiToken.hash_key(key))
    return token, key


def api_token_user(key: str):
    """The active user a token belongs to, or None."""
    if not key or len(key) > 200:
        return None
    token = ApiToken.objects.select_related("user").filter(key_hash=ApiToken.hash_key(key)).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _TOKEN_LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


# --- Uploads -------------------------------------------------------------------------------------


@dataclass
class UploadResult:
    filename: str
    status: str  # created | duplicate | queued | rejected
    memory: Memory | None = None
    job: UploadJob | None = None
    error: str | None = None
    http_status: int = 200


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def _existing_memory(owner, digest: str) -> Memory | None:
    return Memory.objects.for_user(owner).filter(content_hash=digest).order_by("pk").first()


def upload_files(*, owner, files: Sequence, manual_tags: Sequence[str] = ()) -> list[UploadResult]:
    """Turn uploaded files into memories: one result per file, in input order.

    A bad file is rejected with its reason and stores nothing, while the good files beside it are
    stored; identical content becomes a pointer to the memory that already holds it; text over
    KYBERNESIS_ASYNC_UPLOAD_CHARS is queued for a background worker. `files` are objects with
    `.name`, `.size` and `.read()` (Django's UploadedFile).
    """
    limit = settings.KYBERNESIS_MAX_FILES_PER_UPLOAD
    if len(files) > limit:
        raise MemoryTooLargeError(f"at most {limit} files can be uploaded at once; got {len(files)}", field="files")
    if not files:
        raise MemoryInputError("no files were sent", field="files")
    tags = _clean_tags(list(manual_tags), index=None)

    results: list[UploadResult] = []
    to_create: list[tuple[UploadResult, MemoryInput]] = []
    first_with: dict[str, UploadResult] = {}  # content hash -> the first file of this request with it
    copies: list[tuple[UploadResult, UploadResult]] = []
    for upload in files:
        result = UploadResult(filename=_client_name(upload), status="rejected")
        results.append(result)
        try:
            item = _upload_item(upload, tags)
        except (ExtractionError, MemoryInputError) as exc:
            result.error = str(exc)
            result.http_status = getattr(exc, "status", 422)
            continue
        digest = content_hash(item.content)
        if digest in first_with:
            result.status = "duplicate"
            copies.append((result, first_with[digest]))
            continue
        existing = _existing_memory(owner, digest)
        if existing is not None:
            result.status, result.memory = "duplicate", existing
            continue
        first_with[digest] = result
        if len(item.content) > settings.KYBERNESIS_ASYNC_UPLOAD_CHARS:
            result.status = "queued"
            result.job = _upload_job_queue(owner=owner, item=item)
        else:
            result.status = "created"
            to_create.append((result, item))

    if to_create:
        memories = memory_create_many(owner=owner, items=[item for _, item in to_create])
        for (result, _), memory in zip(to_create, memories, strict=True):
            result.memory = memory
    # A second copy of a file in the same request points at what the first copy became.
    for copy, first in copies:
        copy.memory, copy.job = first.memory, first.job
    return results


def _client_name(upload) -> str:
    """The file name as the client sent it (see kybernesis.middleware), else Django's safe one."""
    return str(getattr(upload, "client_name", None) or upload.name or "")


def _upload_item(upload, tags: list[str]) -> MemoryInput:
    from memories.extraction import clean_filename

    name = clean_filename(_client_name(upload))
    max_bytes = settings.KYBERNESIS_MAX_UPLOAD_BYTES
    if upload.size is not None and upload.size > max_bytes:
        raise MemoryTooLargeError(f"the file is {_megabytes(upload.size)}; the limit is {_megabytes(max_bytes)}")
    data = upload.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise MemoryTooLargeError(f"the file is over the limit of {_megabytes(max_bytes)}")
    extracted = extract(name, data)
    content = _clean_content(extracted.text, index=None)
    title = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
    return MemoryInput(title=_clean_title(title, content, index=None), content=content, source=Source.UPLOAD,
                       metadata=extracted.metadata, manual_tags=tags)


def _upload_job_queue(*, owner, item: MemoryInput) -> UploadJob:
    from django_q.tasks import async_task

    job = UploadJob.objects.create(owner=owner, filename=item.metadata.get("filename", item.title),
                                   title=item.title, text=item.content, metadata=item.metadata,
                                   manual_tags=list(item.manual_tags))
    transaction.on_commit(lambda: async_task("memories.tasks.ingest_upload", job.pk,
                                             task_name=f"ingest upload {job.pk}"))
    return job


def upload_job_run(*, job_id: int) -> UploadJob | None:
    """Ingest one queued upload. Safe to run twice: a job that is no longer pending is left alone."""
    with transaction.atomic():
        job = UploadJob.objects.select_for_update(skip_locked=True).filter(
            pk=job_id, status=UploadJob.Status.PENDING).first()
        if job is None:
            return None
        job.status = UploadJob.Status.PROCESSING
        job.save(update_fields=["status", "updated_at"])
    try:
        existing = _existing_memory(job.owner, content_hash(job.text))
        memory = existing or memory_create(owner=job.owner, title=job.title, content=job.text,
                                           source=Source.UPLOAD, metadata=job.metadata,
                                           manual_tags=job.manual_tags)
    except Exception as exc:  # noqa: BLE001 - the job records any failure for the person to see
        logger.exception("upload job %s failed", job.pk)
        job.status, job.error = UploadJob.Status.FAILED, str(exc) or type(exc).__name__
        job.save(update_fields=["status", "error", "updated_at"])
        return job
    job.status, job.memory, job.text = UploadJob.Status.DONE, memory, ""
    job.save(update_fields=["status", "memory", "text", "updated_at"])
    return job


# --- Chat ----------------------------------------------------------------------------------------

CHAT_TITLE_WORDS = 8


def _first_words(text: str, *, words: int = CHAT_TITLE_WORDS, max_chars: int = 80) -> str:
    parts = text.split()
    title = " ".join(parts[:words])
    if len(title) > max_chars:
        title = title[:max_chars].rsplit(" ", 1)[0] or title[:max_chars]
    return title + ("…" if len(parts) > words or len(" ".join(parts)) > len(title) else "")


def chat_message_send(*, owner, content, session: ChatSession | None = None) -> tuple[ChatSession, Memory]:
    """Store one chat message as a memory (source=chat), starting a session when none is given."""
    if not isinstance(content, str):
        raise MemoryInputError("the message must be text", field="content")
    if not content.strip():
        raise MemoryInputError("the message is empty", field="content")
    limit = settings.KYBERNESIS_MAX_CHAT_MESSAGE_CHARS
    if len(content) > limit:
        raise MemoryTooLargeError(f"the message is {len(content):,} characters; the limit is {limit:,}",
                                  field="content")
    with transaction.atomic():
        if session is None:
            session = ChatSession.objects.create(owner=owner, title=_first_words(content))
        session = ChatSession.objects.select_for_update().get(pk=session.pk, owner=owner)
        now = timezone.now()
        memory = memory_create(
            owner=owner,
            title=_first_words(content),
            content=content,
            source=Source.CHAT,
            metadata={"userId": owner.pk, "sessionId": session.pk, "messageIndex": session.message_count,
                      "timestamp": now.isoformat()},
        )
        ChatSession.objects.filter(pk=session.pk).update(message_count=F("message_count") + 1, updated_at=now)
        session.refresh_from_db()
    return session, memory
