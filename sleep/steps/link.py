"""Link: entities and relationships for new or changed memories, then their memory links; stale links
expire, and links older link rules made (graph.linkrules.LINK_RULES_VERSION) are rescored.

Extraction (spaCy, the slow part) goes batch by batch with checkpoints. Links are refreshed once per
owner at the end of the step, for every memory due, because finding link evidence reads the owner's
whole graph: once per step rather than once per batch.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from graph.services import (
    graph_extract_memories,
    graph_extraction_due,
    graph_owner_retype,
    memory_links_outdated_owners,
    memory_links_refresh,
)
from graph.vocabulary import EXTRACTION_RULES_VERSION
from memories.models import Memory
from sleep.steps import BatchOutcome, Scope, Step, one_by_one

EXTRACTION_METRICS = {
    "chunks",
    "mentions",
    "relationships",
    "entities_created",
    "entities_removed",
    "relationships_removed",
    "aliases_merged",
}


def _extract(ids: list[int]) -> tuple[int, dict]:
    # The ingest task usually extracted a new memory's graph already; only stale ones are read again.
    stale = graph_extraction_due(memory_ids=ids)
    extracted = graph_extract_memories(memory_ids=stale) if stale else {}
    metrics = {
        ("chunks_read" if key == "chunks" else key): value
        for key, value in extracted.items()
        if key in EXTRACTION_METRICS
    }
    metrics["extracted"] = len(stale)
    return len(stale), metrics


class LinkStep(Step):
    name = "link"
    batch_size = 500

    def due(self, scope: Scope):
        """Memories created, edited or re-tagged since the last completed cycle began (all, the first
        time), and those whose graph was extracted by older rules (graph.vocabulary's
        EXTRACTION_RULES_VERSION), so better rules re-type old entities."""
        memories = scope.memories()
        if scope.changed_since is None:
            return memories
        since = scope.changed_since
        # Re-tagging by that cycle's own Tag step is stamped with its start, and that cycle linked
        # those memories after tagging them: only later re-tags count.
        return memories.filter(
            Q(updated_at__gte=since)
            | Q(created_at__gte=since)
            | Q(auto_tagged_at__gt=since)
            | Q(graph_extraction__rules_version__lt=EXTRACTION_RULES_VERSION)
        )

    def process(self, scope: Scope, ids: list[int]) -> BatchOutcome:
        # Read again by newer rules, a memory is no longer due when the step finishes: remember it.
        self.processed_ids = {*getattr(self, "processed_ids", ()), *ids}
        try:
            changed, metrics = _extract(ids)
        except Exception:  # noqa: BLE001 - narrowed below, memory by memory
            # Find the memory that breaks the batch: each one alone, the failing ones recorded.
            return one_by_one(ids, _extract)
        return BatchOutcome(processed=len(ids), changed=changed, metrics=metrics)

    def finish(self, scope: Scope) -> dict:
        by_owner: dict[int, list[int]] = defaultdict(list)
        due = set(self.due(scope).values_list("pk", flat=True)) | getattr(self, "processed_ids", set())
        for memory_id, owner_id in Memory.objects.filter(pk__in=sorted(due)).values_list("pk", "owner_id"):
            by_owner[owner_id].append(memory_id)
        # Links older link rules made are rescored once, whole owner at a time, even when nothing
        # of the owner's changed: the refresh below reads all their evidence anyway.
        for owner_id in memory_links_outdated_owners():
            if scope.owner_id is None or owner_id == scope.owner_id:
                by_owner.setdefault(owner_id, [])
        metrics = {
            "links_created": 0,
            "links_reinforced": 0,
            "links_expired": 0,
            "entities_retyped": 0,
            "entities_merged": 0,
        }
        # Nothing changed: no evidence can have appeared or gone, so the idle cycle skips this.
        for owner_id, memory_ids in by_owner.items():
            # New mentions may have changed an entity's majority type; earlier versions' aliases merge.
            retyped = graph_owner_retype(owner_id=owner_id)
            metrics["entities_retyped"] += retyped["retyped"]
            metrics["entities_merged"] += retyped["merged"]
            links = memory_links_refresh(owner=owner_id, memory_ids=memory_ids, expire_all=True)
            for key in ("created", "reinforced", "expired"):
                metrics[f"links_{key}"] += links[key]
        return metrics
