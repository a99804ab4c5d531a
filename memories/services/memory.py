"""Memory writes: create (single and batch), update, archive, delete (into the trash), summaries. Each is atomic."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.language import detect_language
from core.retry import run_with_retry
from memories import embedding, embedding_batcher, tier_rules
from memories.chunking import Chunk, chunk_text
from memories.models import VERSIONED_FIELDS, ActivityKind, Memory, MemoryChunk, Source, TierMove, content_hash
from memories.original_files import OriginalFile
from memories.search import lexical
from memories.services.activity import activities_record, activity_record
from memories.services.chunk_copy import chunks_insert
from memories.services.history import recording, versions_prune
from memories.services.kinds import UNSET as KIND_UNSET
from memories.services.kinds import classify, clean_kind, reclassify
from memories.services.locking import content_locks, memory_lock
from memories.services.originals import StoredOriginal, originals_attach
from memories.services.tags import autotag
from memories.services.tiers import ARCHIVED_REASON, memories_retier, reloaded, tier_facts
from memories.services.trash import memories_restore_for_content, memory_trash, trashed_with_content
from memories.services.validation import (
    MemoryInputError,
    clean_metadata,
    clean_notices,
    clean_priority,
    clean_source,
    clean_tags,
    clean_title,
    content_prepare,
)
from memories.signals import content_changed_on_commit

_UNSET = object()


@dataclass
class MemoryInput:
    title: str | None
    content: str
    source: str = Source.UPLOAD
    priority: float | None = None
    metadata: dict = field(default_factory=dict)
    manual_tags: Sequence[str] = ()
    # The file the memory is made from, kept beside it (memories.services.originals); None: no file.
    original: OriginalFile | StoredOriginal | None = None
    # What the source says about how it read the text (a parser's notices); normalising adds its own.
    notices: Sequence[str] = ()
    # The title is a person's choice (given with an upload): a sync or re-extraction keeps it.
    title_chosen: bool = False
    # A chat message's kind, "question" or "note", as the caller chose it; None: the question rule
    # decides (memories.services.kinds). Only a chat memory has one.
    kind: str | None = None


@dataclass
class PreparedInput:
    """A MemoryInput checked and cleaned by the API's rules and its priority defaulted: what is stored."""

    title: str
    content: str
    source: str
    priority: float
    metadata: dict
    manual_tags: list[str]
    original: OriginalFile | StoredOriginal | None = None
    notices: list[str] = field(default_factory=list)
    title_chosen: bool = False
    kind_chosen: bool = False

    @cached_property
    def chunks(self) -> list[Chunk]:
        # On first use: an upload queued for a worker is checked in the request but chunked in the worker.
        return chunks_for(self.content)


def chunks_for(content: str) -> list[Chunk]:
    return chunk_text(content, max_chars=settings.KYBERNESIS_CHUNK_SIZE, overlap=settings.KYBERNESIS_CHUNK_OVERLAP)


def memory_input_prepare(item: MemoryInput, *, index: int | None) -> PreparedInput:
    """The one set of checks and cleaning for what becomes a memory (create, batch create, upload, import,
    chat, connectors): each refusal is a MemoryInputError naming the field, with the same message
    wherever the input came from. The content is normalised here (core.normalise), so every source
    stores, hashes and deduplicates the same text for the same document."""
    normalised = content_prepare(item.content, index=index)
    content = normalised.text
    source = clean_source(item.source, index=index)
    manual_tags = clean_tags(item.manual_tags, index=index)
    priority = clean_priority(item.priority, index=index)
    if priority is None:
        priority = tier_rules.default_priority(
            source=source, manual_tag_count=len(manual_tags), content_chars=len(content)
        )
    # Every chat message, from any door, is classified here: a question or a note.
    classified = classify(
        source=source,
        content=content,
        metadata=clean_metadata(item.metadata, index=index),
        kind=item.kind,
        index=index,
    )
    return PreparedInput(
        title=clean_title(item.title, content, index=index),
        content=content,
        source=source,
        priority=priority,
        metadata=classified.metadata,
        manual_tags=manual_tags,
        original=item.original,
        notices=clean_notices([*clean_notices(item.notices, index=index), *normalised.notices], index=index),
        title_chosen=item.title_chosen,
        kind_chosen=classified.chosen,
    )


def _embedding_texts(title: str, chunks: Sequence[Chunk]) -> list[str]:
    return [embedding.chunk_embedding_text(title, chunk.text) for chunk in chunks]


def chunk_language(memory: Memory, chunk: Chunk, *, only: bool) -> str:
    """A chunk's language: its memory's when it is the memory's whole text, else read from its own."""
    if only and chunk.text == memory.content and memory.language is not None:
        return memory.language
    return detect_language(chunk.text)


def chunk_rows(memory: Memory, chunks: Sequence[Chunk], vectors) -> list[MemoryChunk]:
    model = embedding.model_name()
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
            embedding_model=model,
            embedding_key=embedding.embedding_key(embedding.chunk_embedding_text(memory.title, chunk.text)),
            tier=memory.tier,
            language=chunk_language(memory, chunk, only=len(chunks) == 1),
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
    original: OriginalFile | StoredOriginal | None = None,
    unique: bool = False,
    notices: Sequence[str] = (),
    kind: str | None = None,
) -> Memory:
    """Validate, chunk, embed and store one memory with all its chunks (and its original file), or nothing.
    A refusal names its field alone, with no item number. With `unique`, content the owner already has
    is not stored again: the memory that has it comes back with `created` False (see memory_create_many).
    `notices` are the source's own (a parser's); normalising the content adds its own. `kind` is a
    chat message's kind as the caller chose it (None: the question rule decides)."""
    item = MemoryInput(
        title=title,
        content=content,
        source=source,
        priority=priority,
        metadata=metadata or {},
        manual_tags=manual_tags,
        original=original,
        notices=notices,
        kind=kind,
    )
    return _store(owner, [memory_input_prepare(item, index=None)], unique=unique)[0]


def memory_create_many(*, owner, items: Sequence[MemoryInput | PreparedInput], unique: bool = False) -> list[Memory]:
    """Store several memories, embedding all their chunks in one pass. One bad item refuses them all.
    An item already prepared (memory_input_prepare, as uploads do to refuse one file and keep the rest)
    is stored as it is, not checked again.

    Each returned memory has `created` set. With `unique`, an item whose content the owner already
    has (or an earlier item of the same call has) is not stored again: its place holds the memory that
    has that content, with `created` False. The check and the insert hold a lock on (owner, content
    hash), so of concurrent calls with the same content exactly one creates it.
    """
    limit = settings.KYBERNESIS_MAX_BATCH_ITEMS
    if len(items) > limit:
        raise MemoryInputError(f"a batch holds at most {limit} items; got {len(items)}", field="items")
    prepared = [
        item if isinstance(item, PreparedInput) else memory_input_prepare(item, index=i) for i, item in enumerate(items)
    ]
    if not prepared:
        return []
    return _store(owner, prepared, unique=unique)


def _store(owner, prepared: list[PreparedInput], *, unique: bool) -> list[Memory]:
    if unique:
        return run_with_retry(lambda: _create_unique(owner, prepared), label="memory_create_many")
    return _create(owner, prepared)


def _create_unique(owner, prepared: list[PreparedInput]) -> list[Memory]:
    digests = [content_hash(p.content) for p in prepared]
    # Known content costs no embedding: look before the lock, then again under it. Content in the
    # trash is known too: the trashed memory is restored rather than stored twice (docs/features/trash.md).
    known = _memories_by_hash(owner, digests)
    in_trash = set(trashed_with_content(owner_id=owner.pk, digests=[d for d in digests if d not in known]))
    fresh: dict[str, PreparedInput] = {}
    for digest, p in zip(digests, prepared, strict=True):
        if digest not in known:
            fresh.setdefault(digest, p)
    vectors = embedding_batcher.embed_texts(_all_embedding_texts(p for d, p in fresh.items() if d not in in_trash))
    with transaction.atomic():
        content_locks(owner_id=owner.pk, keys=fresh)
        known.update(_memories_by_hash(owner, list(fresh)))
        known.update(memories_restore_for_content(owner_id=owner.pk, digests=[d for d in fresh if d not in known]))
        to_store = [(digest, p) for digest, p in fresh.items() if digest not in known]
        store_vectors: list[np.ndarray] = []
        offset = 0
        for digest, p in fresh.items():
            if digest in in_trash:
                if digest not in known:  # purged while this call waited for the lock: embedded after all
                    store_vectors.extend(embedding_batcher.embed_texts(_embedding_texts(p.title, p.chunks)))
                continue
            if digest not in known:
                store_vectors.extend(vectors[offset : offset + len(p.chunks)])
            offset += len(p.chunks)
        created = _create(owner, [p for _, p in to_store], vectors=store_vectors) if to_store else []
    by_hash = {**known, **{digest: memory for (digest, _), memory in zip(to_store, created, strict=True)}}
    results, seen = [], set()
    for digest in digests:
        memory = by_hash[digest]
        if digest in seen:  # a second copy within this call points at what the first became
            memory = copy.copy(memory)
            memory.created = False
        seen.add(digest)
        results.append(memory)
    return results


def _memories_by_hash(owner, digests: Sequence[str]) -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    for memory in Memory.objects.for_user(owner).filter(content_hash__in=list(set(digests))).order_by("pk"):
        if memory.content_hash not in found:
            memory.created = False
            found[memory.content_hash] = memory
    return found


def _all_embedding_texts(prepared) -> list[str]:
    return [text for p in prepared for text in _embedding_texts(p.title, p.chunks)]


def _create(owner, prepared: list[PreparedInput], *, vectors=None) -> list[Memory]:

    # Embedding is the slow part, so it happens before the transaction opens; nothing is written
    # unless every vector was computed. It runs on another thread while this one extracts the tags
    # (pure Python, which the model leaves room for: it runs outside the GIL).
    pending = None if vectors is not None else embedding_batcher.embed_texts_async(_all_embedding_texts(prepared))

    now = timezone.now()
    policy = tier_rules.TierPolicy.from_settings()
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
            notices=p.notices,
            title_edited_at=now if p.title_chosen else None,
            kind_chosen_at=now if p.kind_chosen else None,
            created_at=now,
            updated_at=now,
            tier_changed_at=now,
        )
        autotag(memory, now=now)
        decision = tier_rules.evaluate_tier(tier_facts(memory), now=now, policy=policy)
        memory.tier, memory.decay_score, memory.tier_reason = decision.tier, decision.decay, decision.reason
        memories.append(memory)
    if pending is not None:
        vectors = pending.result()

    with recording(), transaction.atomic():
        Memory.objects.bulk_create(memories)  # version 1 of each, by the history trigger
        activities_record(
            memories=memories, kind=ActivityKind.CREATED, details=[{"source": m.source} for m in memories]
        )
        rows: list[MemoryChunk] = []
        offset = 0
        for memory, p in zip(memories, prepared, strict=True):
            rows.extend(chunk_rows(memory, p.chunks, vectors[offset : offset + len(p.chunks)]))
            offset += len(p.chunks)
        chunks_insert(rows)
        lexical.index_memories(owner_id=owner.pk, memory_ids=[m.pk for m in memories])
        if any(p.original is not None for p in prepared):
            originals_attach(memories=memories, originals=[p.original for p in prepared])
        content_changed_on_commit(memory_ids=[m.pk for m in memories], chunk_counts=[len(p.chunks) for p in prepared])
    for memory, p in zip(memories, prepared, strict=True):
        memory.chunk_count = len(p.chunks)
        memory.created = True
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
    notices=_UNSET,
    kind=_UNSET,
    from_source: bool = False,
) -> Memory:
    """Change a memory. Content is re-chunked only when its hash changed, and unchanged chunk
    texts keep their embeddings, so only new text is embedded.

    A chat message is classified again (memories.services.kinds): `kind` ("question" or "note") is a
    person's choice and is kept over later edits; None hands the kind back to the question rule.

    New content brings its notices anew: `notices` (the source's, e.g. a parser's, when the change
    comes from one) and what normalising it found. `from_source` marks a change that comes from the
    memory's source (a connector sync, a re-extraction) rather than a person: it does not count as an
    edit, and it leaves a title the person chose (Memory.title_edited_at) as it is."""
    changes = _cleaned_changes(
        memory,
        title=title,
        content=content,
        source=source,
        priority=priority,
        metadata=metadata,
        manual_tags=manual_tags,
        notices=notices,
    )
    if kind is not _UNSET:
        changes[_KIND] = clean_kind(kind, index=None)  # whether a kind fits the memory is known under its lock
    # Two edits of one memory queue on its row lock; a deadlock with another writer is retried.
    locked = run_with_retry(lambda: _write_changes(memory.pk, changes, from_source=from_source), label="memory_update")
    locked.chunk_count = MemoryChunk.objects.filter(owner_id=locked.owner_id, memory=locked).count()
    return locked


def _title_from_first_line(memory: Memory) -> bool:
    """Whether the memory's title is the one its content gave it (no title was chosen or given)."""
    return (
        memory.title_edited_at is None
        and bool(memory.content.strip())
        and memory.title == clean_title("", memory.content, index=None)
    )


def _cleaned_changes(memory: Memory, *, title, content, source, priority, metadata, manual_tags, notices) -> dict:
    """The given fields (those not _UNSET), each checked and cleaned as on create. The notices of new
    content are under _CONTENT_NOTICES: they replace the memory's only if the content really changes."""
    changes: dict = {}
    found: list[str] = []
    if content is not _UNSET:
        normalised = content_prepare(content, index=None)
        changes["content"], found = normalised.text, normalised.notices
    if notices is not _UNSET:
        changes["notices"] = clean_notices([*clean_notices(notices, index=None), *found], index=None)
    elif content is not _UNSET:
        changes[_CONTENT_NOTICES] = clean_notices(found, index=None)
    if title is not _UNSET:
        changes["title"] = clean_title(title, changes.get("content", memory.content), index=None)
    elif "content" in changes and _title_from_first_line(memory):
        # A title taken from the first line follows the content it came from: after an edit it
        # would name what the memory no longer says (and the graph, which reads titles, with it).
        changes["title"] = clean_title("", changes["content"], index=None)
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
    return changes


_CONTENT_NOTICES = "_content_notices"
_KIND = "_kind"


def restore_write(*, memory_id: int, fields: dict, restored_from: int) -> Memory:
    """Put back a version's fields (memories.services.restore.memory_version_restore) through the same
    write as memory_update. They were stored before, so they are not cleaned again; the auto tags and
    summary come back as the version had them instead of being made anew."""
    locked = _write_changes(memory_id, fields, restored_from=restored_from)
    locked.chunk_count = MemoryChunk.objects.filter(owner_id=locked.owner_id, memory=locked).count()
    return locked


def _write_changes(
    memory_id: int, changes: dict, *, from_source: bool = False, restored_from: int | None = None
) -> Memory:
    """Save the cleaned changes under the memory's row lock, and bring what depends on them along:
    chunks and embeddings, the lexical index, auto tags, the graph (on commit) and the tier. The
    change is a new version (by the history trigger) and an entry in the activity trail."""
    extra = {} if restored_from is None else {"restoredFrom": restored_from}
    with recording(**extra), transaction.atomic():
        locked = memory_lock(memory_id)
        before = {name: copy.deepcopy(getattr(locked, name)) for name in VERSIONED_FIELDS}
        version_before = locked.version
        changes = dict(changes)  # a retry after a deadlock starts again from what the caller gave
        content_notices = changes.pop(_CONTENT_NOTICES, None)
        if from_source and locked.title_edited_at is not None:
            changes.pop("title", None)  # the person's title stays
        _classify_changes(locked, changes, kind=changes.pop(_KIND, KIND_UNSET))
        rechunk = "content" in changes and content_hash(changes["content"]) != locked.content_hash
        if rechunk and content_notices is not None:
            changes["notices"] = content_notices
        retitle = "title" in changes and changes["title"] != locked.title
        # "Edited" means a person changed what the memory says: its title, content or metadata.
        edited = not from_source and any(
            getattr(locked, name) != changes[name] for name in ("title", "content", "metadata") if name in changes
        )
        if rechunk or retitle:
            # Before the new title is saved: the index subtracts what it added for the old one.
            lexical.unindex_memories(memory_ids=[locked.pk])
        for name, value in changes.items():
            setattr(locked, name, value)
        if edited:
            locked.edited_at = timezone.now()
        if retitle and not from_source:
            locked.title_edited_at = locked.edited_at
        _auto_tags_follow(locked, changes, rechunk=rechunk)
        locked.save()
        changed = [name for name in VERSIONED_FIELDS if getattr(locked, name) != before[name]]
        if changed:
            locked.version = version_before + 1  # what the trigger counted
            versions_prune(memory_ids=[locked.pk], latest=locked.version)
            _record_change(locked, changed, before, from_source=from_source, restored_from=restored_from)
        if rechunk or retitle:
            # The title is part of each chunk's lexical fields and of its embedded text.
            _replace_chunks(locked)
            lexical.index_memories(owner_id=locked.owner_id, memory_ids=[locked.pk])
        if rechunk:
            content_changed_on_commit(memory_ids=[locked.pk])
        if {"priority", "manual_tags", "metadata", "pinned"} & changes.keys():
            memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.EDIT)
            locked.refresh_from_db()
    return locked


def _classify_changes(locked: Memory, changes: dict, *, kind) -> None:
    """Put the kind a chat message has after these changes into them (metadata and kind_chosen_at)."""
    if kind is KIND_UNSET and not {"content", "metadata", "source"} & changes.keys():
        return
    classified = reclassify(
        old_source=locked.source,
        old_metadata=locked.metadata or {},
        old_chosen=locked.kind_chosen_at is not None,
        source=changes.get("source", locked.source),
        content=changes.get("content", locked.content),
        metadata=changes.get("metadata"),
        kind=kind,
    )
    if classified.metadata != (locked.metadata or {}) or "metadata" in changes:
        changes["metadata"] = classified.metadata
    if classified.chosen != (locked.kind_chosen_at is not None):
        changes["kind_chosen_at"] = timezone.now() if classified.chosen else None


def _auto_tags_follow(memory: Memory, changes: dict, *, rechunk: bool) -> None:
    if "auto_tags" in changes:  # a restore: the version's own auto tags, current for its content
        memory.auto_tagged_at, memory.auto_tagged_hash = timezone.now(), content_hash(memory.content)
    elif rechunk or "metadata" in changes or "source" in changes:
        autotag(memory, now=timezone.now())


def _record_change(memory: Memory, changed: list[str], before: dict, *, from_source: bool, restored_from) -> None:
    """The activity entry for one change: a restore, a sync from the source, a change of manual tags
    alone (tagged), or an edit, naming the fields that changed."""
    detail: dict = {"fields": changed, "version": memory.version}
    if restored_from is not None:
        activity_record(memory=memory, kind=ActivityKind.RESTORED, detail={**detail, "restoredFrom": restored_from})
    elif from_source:
        activity_record(memory=memory, kind=ActivityKind.SYNCED, detail=detail)
    elif changed == ["manual_tags"]:
        activity_record(
            memory=memory,
            kind=ActivityKind.TAGGED,
            detail={**detail, **tag_changes(before["manual_tags"], memory.manual_tags)},
        )
    else:
        activity_record(memory=memory, kind=ActivityKind.EDITED, detail=detail)


def tag_changes(old: list[str], new: list[str]) -> dict:
    return {"added": [t for t in new if t not in old], "removed": [t for t in old if t not in new]}


def _replace_chunks(memory: Memory) -> None:
    """Re-chunk the saved memory (its lexical postings are already removed; the caller re-indexes).
    A chunk whose embedded text (title context + text) and model are unchanged keeps its vector."""
    chunks = chunks_for(memory.content)
    known = {
        row.embedding_key: row.embedding
        for row in MemoryChunk.objects.filter(owner_id=memory.owner_id, memory=memory).only(
            "embedding_key", "embedding"
        )
    }
    texts = _embedding_texts(memory.title, chunks)
    hashes = [embedding.embedding_key(text) for text in texts]
    missing = [i for i, h in enumerate(hashes) if h not in known]
    fresh = embedding_batcher.embed_texts([texts[i] for i in missing])
    fresh_by_index = dict(zip(missing, fresh, strict=True))
    vectors = [fresh_by_index[i] if i in fresh_by_index else known[h] for i, h in enumerate(hashes)]
    MemoryChunk.objects.filter(owner_id=memory.owner_id, memory=memory).delete()
    chunks_insert(chunk_rows(memory, chunks, vectors))


def memory_archive(*, memory: Memory, reason: str) -> Memory:
    """Archive a memory whose source is gone, noting why in metadata["archivedReason"]. The tier rules
    keep it archived (unless pinned) until that note is removed, e.g. when the file is restored."""

    def write() -> Memory:
        with recording(), transaction.atomic():
            locked = memory_lock(memory.pk)
            if locked.metadata.get(ARCHIVED_REASON) != reason:
                locked.metadata = {**locked.metadata, ARCHIVED_REASON: reason}
                locked.save(update_fields=["metadata", "updated_at"])
                versions_prune(memory_ids=[locked.pk], latest=locked.version + 1)
                activity_record(memory=locked, kind=ActivityKind.SYNCED, detail={"archived": reason})
            memories_retier(memory_ids=[locked.pk], cause=TierMove.Cause.CONNECTOR)
        return locked

    return reloaded(run_with_retry(write, label="memory_archive"))


def memory_delete(*, memory: Memory) -> None:
    """Delete a memory from any door (page, API, bulk action, MCP, admin): it moves to the trash, where
    it keeps everything and can be restored until it is purged (memories.services.trash). A memory
    deleted or trashed by a concurrent request is a 404."""
    memory_trash(memory=memory)


def memory_summaries_save(*, summaries: dict[int, tuple[str, str, str]]) -> int:
    """Store sleep-agent summaries: {memory id: (summary, preview, content hash it was made from)}.
    A memory whose content changed since is left for the next cycle."""
    if not summaries:
        return 0
    memories = list(
        Memory.objects.filter(pk__in=list(summaries)).only("pk", "owner_id", "title", "content_hash", "summary")
    )
    rewritten = []
    for memory in memories:
        old = memory.summary
        memory.summary, memory.preview, memory.summarized_hash = summaries[memory.pk]
        if memory.summarized_hash == memory.content_hash:
            rewritten.append((memory, old != memory.summary))
    fresh = [m for m, _ in rewritten]
    with recording(), transaction.atomic():
        Memory.objects.bulk_update(fresh, ["summary", "preview", "summarized_hash"], batch_size=500)
        changed = [m for m, differs in rewritten if differs]
        versions_prune(memory_ids=[m.pk for m in changed])
        activities_record(memories=changed, kind=ActivityKind.SUMMARISED)
    return len(fresh)
