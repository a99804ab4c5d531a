"""Memory events other apps subscribe to, and the receivers that keep derived indexes right
whichever way a memory is deleted."""

from collections.abc import Sequence

from django.db import transaction
from django.db.models.signals import pre_delete
from django.dispatch import Signal, receiver

from memories import lexical
from memories.models import Memory


@receiver(pre_delete, sender=Memory, dispatch_uid="memories.unindex_deleted_memory")
def unindex_deleted_memory(sender, instance: Memory, **kwargs) -> None:
    # Admin deletes, queryset deletes and user deletion all pass here, not only memory_delete.
    lexical.unindex_memories(memory_ids=[instance.pk])


# Sent after the transaction that stored new or changed memory content commits, with
# `memory_ids`. Higher layers (the graph) subscribe; memories never names them.
content_changed = Signal()


def content_changed_on_commit(*, memory_ids: Sequence[int]) -> None:
    ids = list(memory_ids)
    transaction.on_commit(lambda: content_changed.send(sender=Memory, memory_ids=ids))
