"""django-q2 entry points for the graph: ids in, call a service."""

from graph import services
from memories.models import Memory


def extract_memories(memory_ids: list[int]) -> dict:
    """Extract the graph of new or changed memories, then refresh their links."""
    result = services.graph_extract_memories(memory_ids=memory_ids)
    owners: dict[int, list[int]] = {}
    for memory_id, owner_id in Memory.objects.filter(pk__in=memory_ids).values_list("pk", "owner_id"):
        owners.setdefault(owner_id, []).append(memory_id)
    result["links"] = {owner_id: services.memory_links_refresh(owner=owner_id, memory_ids=ids)
                       for owner_id, ids in owners.items()}
    return result
