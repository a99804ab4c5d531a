"""Tag writes: auto tags (at ingest and by the sleep agent) and manual tags."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from core.language import detect_language
from memories.auto_tags import auto_tags_for, auto_tags_many, needs_retag, structural_auto_tags
from memories.models import ActivityKind, Memory, MemoryChunk, TierMove
from memories.search import lexical
from memories.services.activity import activities_record, activity_record
from memories.services.history import recording, versions_prune
from memories.services.locking import memory_lock
from memories.services.tiers import BatchResult, memories_retier, reloaded
from memories.services.validation import MAX_MANUAL_TAGS, MemoryInputError, TagNotFoundError
from memories.tag_rules import TagError, normalize_tag, normalize_tags

logger = logging.getLogger(__name__)


def autotag(memory: Memory, *, now) -> None:
    try:
        tags = auto_tags_for(
            source=memory.source, metadata=memory.metadata, content=memory.content, summary=memory.summary
        )
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError) as exc:
        # Keyword extraction (YAKE's tokenizer) can trip on odd text; the memory is still stored, with
        # its structural tags, and left due so that the sleep agent's tag step tries again.
        logger.warning("auto-tagging failed (%s: %s); keeping structural tags only", type(exc).__name__, exc)
        memory.auto_tags = structural_auto_tags(source=memory.source, metadata=memory.metadata)
        memory.sync_derived_fields()
        memory.auto_tagged_at, memory.auto_tagged_hash = None, ""
        return
    _apply_auto_tags(memory, tags, now=now)


def _apply_auto_tags(memory: Memory, tags: list[dict], *, now) -> None:
    memory.auto_tags = tags
    memory.auto_tagged_at = now
    memory.sync_derived_fields()
    memory.auto_tagged_hash = memory.content_hash


def memories_autotag(*, memory_ids: Sequence[int], now=None, force: bool = False) -> BatchResult:
    """Regenerate auto tags for the memories that are due (tagged over 7 days ago, or whose content
    changed since, or stored before languages were read), or for all of them with `force`. Manual tags
    are never touched. A memory that fails is reported and the others are still tagged. A memory
    stored before languages were read gets its language and its chunks' here (the sleep agent's tag
    step), and new tags made with its language's stop-words."""
    now = now or timezone.now()
    result = BatchResult()
    fields = (
        "id",
        "source",
        "metadata",
        "content",
        "summary",
        "manual_tags",
        "auto_tags",
        "auto_tagged_at",
        "auto_tagged_hash",
        "content_hash",
        "language",
    )
    memories = list(Memory.objects.filter(pk__in=list(memory_ids)).only(*fields).order_by("pk"))
    result.processed = len(memories)
    unread = [memory for memory in memories if memory.language is None]
    unread_ids = {memory.pk for memory in unread}
    for memory in unread:
        memory.language = detect_language(memory.content)
    due = [
        memory
        for memory in memories
        if force
        or memory.pk in unread_ids
        or needs_retag(
            auto_tagged_at=memory.auto_tagged_at,
            auto_tagged_hash=memory.auto_tagged_hash,
            content_hash=memory.content_hash,
            now=now,
        )
    ]
    outcomes = auto_tags_many([(m.source, m.metadata, m.content, m.summary) for m in due])
    tagged: list[Memory] = []
    retagged: list[tuple[Memory, dict]] = []
    for memory, outcome in zip(due, outcomes, strict=True):
        if isinstance(outcome, str):
            result.failed.append((memory.pk, outcome))
            continue
        before = memory.auto_tags
        _apply_auto_tags(memory, outcome, now=now)
        if memory.auto_tags != before:
            result.changed += 1
            retagged.append((memory, _auto_tag_changes(before, memory.auto_tags)))
        tagged.append(memory)
    if unread:
        languages_write(unread)
    if tagged:
        with recording(), transaction.atomic():
            _auto_tags_write(tagged, now)
            versions_prune(memory_ids=[m.pk for m, _ in retagged])
            activities_record(
                memories=[m for m, _ in retagged], kind=ActivityKind.TAGGED, details=[d for _, d in retagged]
            )
    return result


def _auto_tag_changes(old: list[dict], new: list[dict]) -> dict:
    before, after = [item["tag"] for item in old], [item["tag"] for item in new]
    return {
        "auto": True,
        "added": [t for t in after if t not in before],
        "removed": [t for t in before if t not in after],
    }


def languages_write(memories: list[Memory]) -> None:
    """Store the languages read for memories stored before languages were, and read their chunks'.

    A chunk whose language PostgreSQL stems with a config of its own is indexed again in it
    (memories.search.lexical), under its memory's row lock: taken out as it was added, in english, and
    added again in its language."""
    with transaction.atomic():
        live = dict(
            Memory.all_objects.select_for_update()
            .filter(pk__in=[memory.pk for memory in memories], trashed_at__isnull=True)
            .order_by("pk")
            .values_list("pk", "owner_id")
        )
        Memory.objects.bulk_update(memories, ["language"], batch_size=500)
        chunks = list(
            MemoryChunk.objects.filter(memory__in=memories, language__isnull=True).only("id", "text", "memory_id")
        )
        by_memory = {memory.pk: memory for memory in memories}
        counts: dict[int, int] = {}
        for chunk in chunks:
            counts[chunk.memory_id] = counts.get(chunk.memory_id, 0) + 1
        for chunk in chunks:
            memory = by_memory[chunk.memory_id]
            whole = counts[chunk.memory_id] == 1 and chunk.text == memory.content
            chunk.language = memory.language if whole else detect_language(chunk.text)
        restemmed = sorted(
            {c.memory_id for c in chunks if c.memory_id in live and lexical.language_prefix(c.language or "")}
        )
        lexical.unindex_memories(memory_ids=restemmed)
        MemoryChunk.objects.bulk_update(chunks, ["language"], batch_size=500)
        by_owner: dict[int, list[int]] = {}
        for memory_id in restemmed:
            by_owner.setdefault(live[memory_id], []).append(memory_id)
        for owner_id, memory_ids in by_owner.items():
            lexical.index_memories(owner_id=owner_id, memory_ids=memory_ids)


def _auto_tags_write(tagged: list[Memory], now) -> None:
    if tagged:
        # One statement for the batch (bulk_update's CASE per row is slow at hundreds of rows).
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memories_memory m SET auto_tags = v.auto_tags, auto_tagged_at = %s, auto_tagged_hash = v.hash, "
                "tags = ARRAY(SELECT jsonb_array_elements_text(v.tags)) "
                "FROM unnest(%s::bigint[], %s::jsonb[], %s::jsonb[], %s::text[]) AS v(id, auto_tags, tags, hash) "
                "WHERE m.id = v.id",
                [
                    now,
                    [m.pk for m in tagged],
                    [Jsonb(m.auto_tags) for m in tagged],
                    [Jsonb(m.tags) for m in tagged],
                    [m.auto_tagged_hash for m in tagged],
                ],
            )


def memory_tags_add(*, memory: Memory, tags) -> Memory:
    """Add manual tags (normalised; ones it already has are ignored), up to 50 in all."""
    try:
        new = normalize_tags(tags, limit=MAX_MANUAL_TAGS)
    except TagError as exc:
        raise MemoryInputError(str(exc), field="tags") from None
    if not new:
        raise MemoryInputError("give at least one tag", field="tags")
    with recording(), transaction.atomic():
        locked = memory_lock(memory.pk)
        combined = [*locked.manual_tags, *(t for t in new if t not in locked.manual_tags)]
        if len(combined) > MAX_MANUAL_TAGS:
            raise MemoryInputError(
                f"a memory can have at most {MAX_MANUAL_TAGS} manual tags; it has "
                f"{len(locked.manual_tags)} and {len(combined) - len(locked.manual_tags)} "
                "more were given",
                field="tags",
            )
        if combined != locked.manual_tags:
            added = [t for t in combined if t not in locked.manual_tags]
            locked.manual_tags = combined
            locked.save(update_fields=["manual_tags", "updated_at"])
            versions_prune(memory_ids=[locked.pk], latest=locked.version + 1)
            activity_record(memory=locked, kind=ActivityKind.TAGGED, detail={"added": added, "removed": []})
            memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.EDIT)
    return reloaded(locked)


def memory_tag_remove(*, memory: Memory, tag: str) -> Memory:
    """Remove one manual tag. Auto tags cannot be removed this way: the system owns them."""
    try:
        tag = normalize_tag(tag)
    except TagError as exc:
        raise MemoryInputError(str(exc), field="tag") from None
    with recording(), transaction.atomic():
        locked = memory_lock(memory.pk)
        if tag not in locked.manual_tags:
            raise TagNotFoundError(f"this memory has no manual tag '{tag}'", field="tag")
        locked.manual_tags = [t for t in locked.manual_tags if t != tag]
        locked.save(update_fields=["manual_tags", "updated_at"])
        versions_prune(memory_ids=[locked.pk], latest=locked.version + 1)
        activity_record(memory=locked, kind=ActivityKind.TAGGED, detail={"added": [], "removed": [tag]})
        memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.EDIT)
    return reloaded(locked)
