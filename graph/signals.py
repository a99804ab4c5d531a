"""Signal receivers that keep the graph right however a memory is deleted."""

from django.db.models.signals import post_delete, pre_delete
from django.dispatch import receiver

from graph import services
from memories.models import Memory


@receiver(pre_delete, sender=Memory, dispatch_uid="graph.note_deleted_memory")
def note_deleted_memory(sender, instance: Memory, **kwargs) -> None:
    # Admin deletes, queryset deletes and user deletion all pass here, not only memory_delete; the
    # mentions and evidence go with the memory, so what they pointed at is noted first.
    instance._graph_touched = services.graph_forget_memory(memory=instance)


@receiver(post_delete, sender=Memory, dispatch_uid="graph.recount_after_deleted_memory")
def recount_after_deleted_memory(sender, instance: Memory, **kwargs) -> None:
    entities, edges = getattr(instance, "_graph_touched", (set(), set()))
    services.graph_recount(owner_id=instance.owner_id, entity_ids=entities, relationship_ids=edges)
