"""django-q2 entry points for the graph: ids in, call a service."""

from core.retry import run_with_retry
from graph import services
from memories.models import Memory


def extract_memories(memory_ids: list[int]) -> dict:
    """Extract the graph of new or changed memories, then refresh their links.

    Both steps are idempotent and skip memories deleted meanwhile, so a conflict with a concurrent edit
    or delete (a deadlock, or a row that vanished under a foreign key) runs the step again rather than
    leaving the graph stale; each transaction inside retries on its own first."""
    result = run_with_retry(lambda: services.graph_extract_memories(memory_ids=memory_ids), vanished=True,
                            attempts=3, label="graph extract task")
    owners: dict[int, list[int]] = {}
    for memory_id, owner_id in Memory.objects.filter(pk__in=memory_ids).values_list("pk", "owner_id"):
        owners.setdefault(owner_id, []).append(memory_id)
    result["links"] = {owner_id: services.memory_links_refresh(owner=owner_id, memory_ids=ids)
                       for owner_id, ids in owners.items()}
    return result
