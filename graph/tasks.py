"""django-q2 entry points for the graph: ids in, call a service."""

from graph import services


def extract_memories(memory_ids: list[int]) -> dict:
    """Extract the graph of new or changed memories, then refresh their links.

    Both steps are idempotent and skip memories deleted meanwhile, so a conflict with a concurrent edit
    or delete (a deadlock, or a row that vanished under a foreign key) runs the extraction again
    rather than leaving the graph stale; each transaction inside retries on its own first."""
    return services.graph_ingest_memories(memory_ids=memory_ids)
