"""Memory writes: create (single and batch), update, archive, delete, summaries. Each is atomic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories import embedding, lexical, tiering
from memories.chunking import Chunk, chunk_text
from memories.models import Memory, MemoryChunk, Source, TierMove, content_hash
from memories.services.tags import autotag
from memories.signals import content_changed_on_commit
from memories.services.tiers import ARCHIVED_REASON, memories_retier, reloaded, tier_facts
from memories.services.validation import (MemoryInputError, clean_content, clean_metadata, clean_priority,
                                          clean_source, clean_tags, clean_title)

_UNSET = object()


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


def _chunks_for(content: str) -> list[Chunk]:
    return chunk_text(content, max_chars=settings.KYBERNESIS_CHUNK_SIZE, overlap=settings.KYBERNESIS_CHUNK_OVERLAP)


def _prepare(item: MemoryInput, *, index: int | None) -> _Prepared:
    content = clean_content(item.content, index=index)
    source = clean_source(item.source, index=index)
    manual_tags = clean_tags(item.manual_tags, index=index)
    priority = clean_priority(item.priority, index=index)
    if priority is None:
        priority = tiering.default_priority(source=source, manual_tag_count=len(manual_tags),
                                            content_chars=len(content))
    return _Prepared(
        title=clean_title(item.title, content, index=index),
        content=content,
        source=source,
        priority=priority,
        metadata=clean_metadata(item.metadata, index=index),
        manual_tags=manual_tags,
        chunks=_chunks_for(content),
    )


def _embedding_texts(title: str, chunks: Sequence[Chunk]) -> list[str]:
    return [embedding.chunk_embedding_text(title, chunk.text) for chunk in chunks]


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
            embedded_hash=embedding.embedded_text_hash(embedding.chunk_embedding_text(memory.title, chunk.text)),
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
    texts = [text for p in prepared for text in _embedding_texts(p.title, p.chunks)]
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
        autotag(memory, now=now)
        decision = tiering.evaluate_tier(tier_facts(memory), now=now, policy=policy)
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
        content_changed_on_commit(memory_ids=[m.pk for m in memories])
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
        changes["content"] = clean_content(content, index=None)
    if title is not _UNSET:
        changes["title"] = clean_title(title, changes.get("content", memory.content), index=None)
    if source is not _UNSET:
        changes["source"] = clean_source(source, index=None)
    if priority is not _UNSET:
        if priority is None:
            raise MemoryInputError("priority must be a number from 0 to 1", field="priority")
        changes["priority"] = clean_priority(priority, index=None)
    if metadata is not _UNSET:
        changes["metadata"] = clean_metadata(metadata, index=None)
    if manual_tags is not _UNSET:
        changes["manual_tags"] = clean_tags(manual_tags, index=None)

    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        rechunk = "content" in changes and content_hash(changes["content"]) != locked.content_hash
        retitle = "title" in changes and changes["title"] != locked.title
        if rechunk or retitle:
            # Before the new title is saved: the index subtracts what it added for the old one.
            lexical.unindex_memories(memory_ids=[locked.pk])
        for name, value in changes.items():
            setattr(locked, name, value)
        if rechunk or "metadata" in changes or "source" in changes:
            autotag(locked, now=timezone.now())
        locked.save()
        if rechunk or retitle:
            # The title is part of each chunk's lexical fields and of its embedded text.
            _replace_chunks(locked)
            lexical.index_memories(owner_id=locked.owner_id, memory_ids=[locked.pk])
        if rechunk:
            content_changed_on_commit(memory_ids=[locked.pk])
        if {"priority", "manual_tags", "metadata"} & changes.keys():
            memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.EDIT)
            locked.refresh_from_db()
    locked.chunk_count = locked.chunks.count()
    return locked


def _replace_chunks(memory: Memory) -> None:
    """Re-chunk the saved memory (its lexical postings are already removed; the caller re-indexes).
    A chunk whose embedded text (title context + text) is unchanged keeps its vector."""
    chunks = _chunks_for(memory.content)
    known = {
        row.embedded_hash: row.embedding
        for row in MemoryChunk.objects.filter(memory=memory).exclude(embedded_hash="")
        .only("embedded_hash", "embedding")
    }
    texts = _embedding_texts(memory.title, chunks)
    hashes = [embedding.embedded_text_hash(text) for text in texts]
    missing = [i for i, h in enumerate(hashes) if h not in known]
    fresh = embedding.embed_texts([texts[i] for i in missing])
    fresh_by_index = dict(zip(missing, fresh, strict=True))
    vectors = [fresh_by_index[i] if i in fresh_by_index else known[h] for i, h in enumerate(hashes)]
    MemoryChunk.objects.filter(memory=memory).delete()
    MemoryChunk.objects.bulk_create(_chunk_rows(memory, chunks, vectors), batch_size=500)


def memory_archive(*, memory: Memory, reason: str) -> Memory:
    """Archive a memory whose source is gone, noting why in metadata["archivedReason"]. The tier rules
    keep it archived (unless pinned) until that note is removed, e.g. when the file is restored."""
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        locked.metadata = {**locked.metadata, ARCHIVED_REASON: reason}
        locked.save(update_fields=["metadata", "updated_at"])
        memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.CONNECTOR)
    return reloaded(locked)


def memory_delete(*, memory: Memory) -> None:
    """Remove a memory; its chunks and their lexical postings go with it (see memories.signals)."""
    with transaction.atomic():
        memory.delete()


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
