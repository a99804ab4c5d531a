"""The trash: move memories into it, restore them, purge them (one, all of an owner's, the expired).

A memory in the trash keeps its row, chunks, embeddings, tags, links and original file, but is out of
every read: `Memory.objects` leaves it out, its chunks move to the trash storage layer (no vector index
covers it) and its lexical postings are removed, and the graph forgets its mentions (memories_trashed).
Restoring undoes exactly that; purging deletes the row and what hangs off it, the original's file once
the transaction commits. See docs/features/trash.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.http import Http404
from django.utils import timezone

from core.actors import current_actor
from core.retry import run_with_retry
from core.schedules import schedule_ensure
from memories.models import TRASH_LAYER, ActivityKind, Memory, MemoryChunk, PurgedMemory
from memories.search import lexical
from memories.services.activity import activities_record
from memories.signals import content_changed_on_commit, memories_trashed

PURGE_SCHEDULE = "memories: purge memories trashed more than KYBERNESIS_TRASH_DAYS ago"
PURGE_EVERY_MINUTES = 60
# Memories purged per transaction when a whole trash is emptied or the expired ones are swept.
PURGE_BATCH = 200


class NotInTrash(Http404):
    """The memory asked for is not in the owner's trash; the message says why (purged, live, unknown)."""


def trash_days() -> int:
    return max(0, int(settings.KYBERNESIS_TRASH_DAYS))


def purge_due_at(memory: Memory):
    """When the scheduled purge deletes a memory trashed at `memory.trashed_at`."""
    return memory.trashed_at + timedelta(days=trash_days()) if memory.trashed_at else None


def _not_in_trash(owner_id: int, memory_id: int) -> NotInTrash:
    purged = PurgedMemory.objects.filter(owner_id=owner_id, memory_id=memory_id).first()
    if purged is not None:
        when = timezone.localtime(purged.purged_at).strftime("%Y-%m-%d %H:%M")
        return NotInTrash(f"Memory {memory_id} was deleted forever on {when} and cannot be restored.")
    if Memory.objects.filter(owner_id=owner_id, pk=memory_id).exists():
        return NotInTrash(f"Memory {memory_id} is not in the trash.")
    return NotInTrash(f"No memory {memory_id} in your trash.")


def _lock_trashed(*, owner_id: int, memory_ids: Sequence[int]) -> list[Memory]:
    """Lock these memories' rows in id order (every memory writer's first lock) and return those of the
    owner that are in the trash."""
    return list(
        Memory.all_objects.select_for_update()
        .filter(owner_id=owner_id, pk__in=sorted(set(memory_ids)), trashed_at__isnull=False)
        .order_by("pk")
    )


def memories_trash(*, owner_id: int, memory_ids: Sequence[int]) -> list[int]:
    """Move these memories of the owner into the trash, in one transaction; returns the ids moved.
    Memories already in the trash, another owner's and unknown ids are left alone."""

    def write() -> list[int]:
        with transaction.atomic():
            ids = list(
                Memory.objects.select_for_update()
                .filter(owner_id=owner_id, pk__in=sorted(set(memory_ids)))
                .order_by("pk")
                .values_list("pk", flat=True)
            )
            if not ids:
                return []
            # Before the chunks leave the active layers: unindexing reads the chunks and the titles.
            lexical.unindex_memories(memory_ids=ids)
            MemoryChunk.objects.filter(owner_id=owner_id, memory_id__in=ids).update(tier=TRASH_LAYER)
            # A plain UPDATE: updated_at stays what it was, so a restore gives back the memory as it was.
            Memory.all_objects.filter(pk__in=ids).update(
                trashed_at=timezone.now(), trashed_by=current_actor().display[:200]
            )
            activities_record(
                memories=list(Memory.all_objects.filter(pk__in=ids).only("pk", "owner_id", "title")),
                kind=ActivityKind.TRASHED,
            )
            memories_trashed.send(sender=Memory, owner_id=owner_id, memory_ids=ids)
            return ids

    return run_with_retry(write, label="memories_trash")


def memory_trash(*, memory: Memory) -> None:
    """Move one memory into the trash; a memory deleted or trashed meanwhile is a 404."""
    if not memories_trash(owner_id=memory.owner_id, memory_ids=[memory.pk]):
        raise Http404("The memory no longer exists (it was deleted).")


def _restore_locked(owner_id: int, memories: list[Memory]) -> None:
    """Bring locked, trashed memories back (inside the caller's transaction)."""
    ids = [m.pk for m in memories]
    Memory.all_objects.filter(pk__in=ids).update(trashed_at=None, trashed_by="")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memorychunk c SET tier = m.tier FROM memories_memory m "
            "WHERE c.owner_id = %s AND c.memory_id = ANY(%s) AND m.id = c.memory_id",
            [owner_id, ids],
        )
    lexical.index_memories(owner_id=owner_id, memory_ids=ids)
    # The graph forgot the memories' mentions when they were trashed: it reads them again.
    counts = dict(
        MemoryChunk.objects.filter(owner_id=owner_id, memory_id__in=ids)
        .values("memory_id")
        .annotate(n=Count("id"))
        .values_list("memory_id", "n")
    )
    content_changed_on_commit(memory_ids=ids, chunk_counts=[counts.get(pk, 0) for pk in ids])
    for memory in memories:
        memory.trashed_at, memory.trashed_by = None, ""
    activities_record(memories=memories, kind=ActivityKind.UNTRASHED)


def memories_restore_from_trash(*, owner_id: int, memory_ids: Sequence[int]) -> list[int]:
    """Restore those of these memories that are in the owner's trash, in one transaction; returns their ids."""

    def write() -> list[int]:
        with transaction.atomic():
            memories = _lock_trashed(owner_id=owner_id, memory_ids=memory_ids)
            if memories:
                _restore_locked(owner_id, memories)
            return [m.pk for m in memories]

    return run_with_retry(write, label="memories_restore_from_trash")


def memory_restore_from_trash(*, owner, memory_id: int) -> Memory:
    """Restore one memory from the owner's trash: everything it had comes back, searchable at once.
    A memory that is not there is a 404 whose message says why (purged, not trashed, unknown)."""
    owner_id = owner.pk if hasattr(owner, "pk") else int(owner)
    if not memories_restore_from_trash(owner_id=owner_id, memory_ids=[memory_id]):
        raise _not_in_trash(owner_id, memory_id)
    return Memory.objects.get(pk=memory_id)


def trashed_with_content(*, owner_id: int, digests: Sequence[str]) -> dict[str, Memory]:
    """The owner's trashed memories holding these content hashes (the oldest per hash)."""
    found: dict[str, Memory] = {}
    rows = Memory.all_objects.trashed().filter(owner_id=owner_id, content_hash__in=list(set(digests))).order_by("pk")
    for memory in rows:
        found.setdefault(memory.content_hash, memory)
    return found


def memories_restore_for_content(*, owner_id: int, digests: Sequence[str]) -> dict[str, Memory]:
    """Adding content that is in the trash restores the trashed memory instead of storing a second copy
    (docs/features/trash.md, "Adding it again"). Runs inside the caller's transaction, under its content locks;
    returns the restored memories by content hash, each with `created` False."""
    trashed = trashed_with_content(owner_id=owner_id, digests=digests)
    if not trashed:
        return {}
    locked = _lock_trashed(owner_id=owner_id, memory_ids=[m.pk for m in trashed.values()])
    if locked:
        _restore_locked(owner_id, locked)
    by_pk = {m.pk: m for m in locked}
    restored = {}
    for digest, memory in trashed.items():
        if memory.pk in by_pk:
            memory = by_pk[memory.pk]
            memory.created = False
            memory.restored = True
            restored[digest] = memory
    return restored


def _purge_locked(owner_id: int, memories: list[Memory]) -> int:
    """Delete locked, trashed memories and note each as purged (inside the caller's transaction). The
    chunks, postings-free by now, tags, links and the original go with the row; the original's file is
    removed once the transaction commits (memories.services.originals)."""
    if not memories:
        return 0
    now = timezone.now()
    # Before the delete: the entry keeps the title, and its link to the memory becomes null.
    activities_record(memories=memories, kind=ActivityKind.PURGED)
    PurgedMemory.objects.bulk_create(
        [PurgedMemory(owner_id=owner_id, memory_id=m.pk, purged_at=now) for m in memories], ignore_conflicts=True
    )
    _, per_model = Memory.all_objects.filter(pk__in=[m.pk for m in memories]).delete()
    return per_model.get(Memory._meta.label, 0)


def memory_purge(*, owner, memory_id: int) -> None:
    """Delete one memory of the owner's trash forever. One that is not there is a 404 saying why."""
    owner_id = owner.pk if hasattr(owner, "pk") else int(owner)

    def write() -> int:
        with transaction.atomic():
            return _purge_locked(owner_id, _lock_trashed(owner_id=owner_id, memory_ids=[memory_id]))

    if not run_with_retry(write, label="memory_purge"):
        raise _not_in_trash(owner_id, memory_id)


def _purge_batches(query) -> int:
    """Purge the trashed memories `query` selects, PURGE_BATCH per transaction, until none are left."""
    purged = 0
    while True:

        def write() -> int:
            with transaction.atomic():
                rows = list(
                    query()
                    .select_for_update(skip_locked=True)
                    .order_by("pk")
                    .only("pk", "owner_id", "trashed_at")[:PURGE_BATCH]
                )
                n = 0
                for owner_id in sorted({m.owner_id for m in rows}):
                    n += _purge_locked(owner_id, [m for m in rows if m.owner_id == owner_id])
                return n if rows else -1

        n = run_with_retry(write, label="trash purge")
        if n < 0:
            return purged
        purged += n


def trash_empty(*, owner) -> int:
    """Delete everything in the owner's trash forever; returns how many memories went."""
    owner_id = owner.pk if hasattr(owner, "pk") else int(owner)
    return _purge_batches(lambda: Memory.all_objects.trashed().filter(owner_id=owner_id))


def trash_purge_expired(*, now=None) -> int:
    """Delete forever every memory in a trash for longer than KYBERNESIS_TRASH_DAYS (the schedule)."""
    cutoff = (now or timezone.now()) - timedelta(days=trash_days())
    return _purge_batches(lambda: Memory.all_objects.filter(trashed_at__isnull=False, trashed_at__lte=cutoff))


def trash_schedule_ensure() -> None:
    schedule_ensure(name=PURGE_SCHEDULE, func="memories.tasks.trash_purge_expired", minutes=PURGE_EVERY_MINUTES)
