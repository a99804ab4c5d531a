"""Memory events other apps subscribe to, and the receivers that keep derived indexes right
whichever way a memory is deleted."""

from collections.abc import Sequence

from django.db import transaction
from django.db.models.signals import pre_delete
from django.dispatch import Signal, receiver

from memories.models import Memory
from memories.search import lexical


@receiver(pre_delete, sender=Memory, dispatch_uid="memories.unindex_deleted_memory")
def unindex_deleted_memory(sender, instance: Memory, **kwargs) -> None:
    # Admin deletes, queryset deletes and user deletion all pass here, not only a purge. A trashed
    # memory's postings and corpus totals were taken out when it was trashed.
    if instance.trashed_at is None:
        lexical.unindex_memories(memory_ids=[instance.pk])


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
