"""Writes to the knowledge graph, by concern: ingest (extraction into entities, mentions and
relationships), upkeep (recounts, normalisation, merges, cleanup), links (memory links) and sql
(the owner lock and COPY). Every public name is importable from here.

Every function is idempotent and batch-friendly: the upload task and the sleep agent's Link step
call the same ones, and running them twice changes nothing the second time.
"""

from graph.services.ingest import graph_extract_memories, graph_extraction_due, graph_ingest_memories, graph_rebuild
from graph.services.links import memory_links_expire, memory_links_outdated_owners, memory_links_refresh
from graph.services.retype import graph_owner_retype
from graph.services.upkeep import (
    entity_merge,
    graph_forget_memory,
    graph_forget_trashed,
    graph_normalise,
    graph_recount,
)

__all__ = [
    "entity_merge",
    "graph_extract_memories",
    "graph_extraction_due",
    "graph_forget_memory",
    "graph_forget_trashed",
    "graph_ingest_memories",
    "graph_normalise",
    "graph_owner_retype",
    "graph_rebuild",
    "graph_recount",
    "memory_links_expire",
    "memory_links_outdated_owners",
    "memory_links_refresh",
]
