"""Signal receivers that keep the graph right: extraction when memory content changes, and cleanup
however a memory is deleted."""

from django.conf import settings
from django.db.models.signals import post_delete, pre_delete
from django.dispatch import receiver
from django_q.tasks import async_task

from graph import services
from memories.models import Memory
from memories.signals import content_changed, memories_trashed


@receiver(pre_delete, sender=Memory, dispatch_uid="graph.note_deleted_memory")
def note_deleted_memory(sender, instance: Memory, **kwargs) -> None:
    # Admin deletes, queryset deletes and user deletion all pass here, not only memory_delete; the
    # mentions and evidence go with the memory, so what they pointed at is noted first.
    instance._graph_touched = services.graph_forget_memory(memory=instance)


@receiver(post_delete, sender=Memory, dispatch_uid="graph.recount_after_deleted_memory")
def recount_after_deleted_memory(sender, instance: Memory, **kwargs) -> None:
    entities, edges = getattr(instance, "_graph_touched", (set(), set()))
    services.graph_recount(owner_id=instance.owner_id, entity_ids=entities, relationship_ids=edges)


@receiver(memories_trashed, dispatch_uid="graph.forget_trashed_memories")
def forget_trashed_memories(sender, owner_id, memory_ids, **kwargs) -> None:
    # In the trashing transaction: the graph shows nothing of a trashed memory from the same moment.
    services.graph_forget_trashed(owner_id=owner_id, memory_ids=list(memory_ids))


@receiver(content_changed, dispatch_uid="graph.extract_changed_memories")
def extract_changed_memories(sender, memory_ids, chunk_counts=None, **kwargs) -> None:
    # Runs after the memory's transaction committed: the worker sees the new chunks. A large batch
    # becomes several tasks, so that each fits its timeout, and a task of a killed worker is handed
    # out again soon (see core.queue); the task is idempotent, so running one twice is harmless.
    for ids in task_groups(memory_ids, chunk_counts):
        async_task("graph.tasks.extract_memories", ids, timeout=settings.KYBERNESIS_GRAPH_TASK_TIMEOUT)


def task_groups(memory_ids, chunk_counts) -> list[list[int]]:
    """Memory ids in groups of at most KYBERNESIS_GRAPH_TASK_CHUNKS chunks (one group when the
    counts are unknown)."""
    if chunk_counts is None:
        return [list(memory_ids)]
    limit = max(1, settings.KYBERNESIS_GRAPH_TASK_CHUNKS)
    groups: list[list[int]] = []
    size = 0
    for memory_id, count in zip(memory_ids, chunk_counts, strict=True):
        if not groups or (groups[-1] and size + count > limit):
            groups.append([])
            size = 0
        groups[-1].append(memory_id)
        size += count
    return groups
