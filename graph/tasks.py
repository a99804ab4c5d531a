"""django-q2 entry points for the graph: ids in, call a service."""

from graph import services


def extract_memories(memory_ids: list[int]) -> dict:
    """Extract the graph of new or changed memories, then refresh their links."""
    return services.graph_ingest_memories(memory_ids=memory_ids)
