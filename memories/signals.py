"""Memory events other apps subscribe to, and the receivers that keep derived indexes right
whichever way a memory is deleted."""

from collections.abc import Sequence

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.models.signals import pre_delete
from django.dispatch import Signal, receiver

from memories.models import Memory
from memories.search import lexical

# Memories unindexed together, per statement, when a whole deletion's are known at its first memory.
UNINDEX_BATCH = 1000


@receiver(pre_delete, sender=Memory, dispatch_uid="memories.unindex_deleted_memory")
def unindex_deleted_memory(sender, instance: Memory, origin=None, **kwargs) -> None:
    # Admin deletes, queryset deletes and user deletion all pass here, not only a purge. A trashed
    # memory's postings and corpus totals were taken out when it was trashed.
    if instance.trashed_at is not None:
        return
    covered = _unindex_deletion(origin)
    if instance.pk not in covered:
        lexical.unindex_memories(memory_ids=[instance.pk])


def _deletion_scope(origin):
    """The memories a deletion that started at `origin` takes with it, when that can be said: those of
    a memory queryset, and those of a user or of a queryset of users (an account delete)."""
    if isinstance(origin, QuerySet):
        if origin.model is Memory:
            return Memory.all_objects.filter(pk__in=origin.values("pk"))
        if origin.model is get_user_model():
            return Memory.all_objects.filter(owner__in=origin.values("pk"))
    elif isinstance(origin, get_user_model()) and origin.pk is not None:
        return Memory.all_objects.filter(owner_id=origin.pk)
    return None


def _unindex_deletion(origin) -> frozenset[int]:
    """Unindex, at the first memory of a deletion, every memory the deletion takes, in batches: one
    statement per memory made deleting an account of 10,000 memories take over 20 minutes. Returns
    the ids done for this deletion. Django sends every pre_delete before it deletes any row, so the
    chunks are all still there.

    The mark on the origin lasts as long as the work it stands for: it holds a no-op on_commit
    callback, which Django drops when the transaction or the savepoint it was registered in rolls
    back, so a deletion retried with the same origin after a rollback unindexes again. (A savepoint
    made by hand, transaction.savepoint(), is not tracked by on_commit; the project makes none.)"""
    scope = _deletion_scope(origin)
    if scope is None:
        return frozenset()
    done = getattr(origin, "_kybernesis_unindexed", None)
    if done is not None and any(func is done[0] for _, func, _ in connection.run_on_commit):
        return done[1]
    ids = list(scope.filter(trashed_at__isnull=True).order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), UNINDEX_BATCH):
        lexical.unindex_memories(memory_ids=ids[start : start + UNINDEX_BATCH])

    def unindexed() -> None:  # the mark; nothing to do at commit
        pass

    transaction.on_commit(unindexed)
    covered = frozenset(ids)
    origin._kybernesis_unindexed = (unindexed, covered)
    return covered


# Sent inside the transaction that moves memories into the trash, with `owner_id` and `memory_ids`,
# so that what higher layers derived from them (the graph) leaves every read at the same moment.
memories_trashed = Signal()


# Sent after the transaction that stored new or changed memory content commits, with
# `memory_ids` and `chunk_counts` (None when unknown). Higher layers (the graph) subscribe; memories never names them.
content_changed = Signal()


def content_changed_on_commit(*, memory_ids: Sequence[int], chunk_counts: Sequence[int] | None = None) -> None:
    """Send content_changed once the current transaction commits. `chunk_counts` (one per memory)
    lets a subscriber size its work."""
    ids = list(memory_ids)
    counts = list(chunk_counts) if chunk_counts is not None else None
    transaction.on_commit(lambda: content_changed.send(sender=Memory, memory_ids=ids, chunk_counts=counts))
