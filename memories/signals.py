"""Signal receivers that keep derived indexes right whichever way a memory is deleted."""

from django.db.models.signals import pre_delete
from django.dispatch import receiver

from memories import lexical
from memories.models import Memory


@receiver(pre_delete, sender=Memory, dispatch_uid="memories.unindex_deleted_memory")
def unindex_deleted_memory(sender, instance: Memory, **kwargs) -> None:
    # Admin deletes, queryset deletes and user deletion all pass here, not only memory_delete.
    lexical.unindex_memories(memory_ids=[instance.pk])
