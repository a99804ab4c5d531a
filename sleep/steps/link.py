"""Link: entities, relationships and memory links for new or changed memories; stale links expire."""

from __future__ import annotations

from collections import defaultdict

from django.contrib.auth import get_user_model
from django.db.models import Q

from memories.models import Memory
from sleep.steps import BatchOutcome, Scope, Step, one_by_one


EXTRACTION_METRICS = {"chunks", "mentions", "relationships", "entities_created", "entities_removed",
                      "relationships_removed", "aliases_merged"}


def _link(ids: list[int]) -> tuple[int, dict]:
    from graph.services import graph_extract_memories, graph_extraction_due, memory_links_refresh

    # The ingest task usually extracted a new memory's graph already; only stale ones are read again.
    stale = graph_extraction_due(memory_ids=ids)
    extracted = graph_extract_memories(memory_ids=stale) if stale else {}
    metrics = {("chunks_read" if key == "chunks" else key): value for key, value in extracted.items()
               if key in EXTRACTION_METRICS}
    metrics["extracted"] = len(stale)
    by_owner: dict[int, list[int]] = defaultdict(list)
    for memory_id, owner_id in Memory.objects.filter(pk__in=ids).values_list("pk", "owner_id"):
        by_owner[owner_id].append(memory_id)
    users = get_user_model().objects.in_bulk(list(by_owner))
    changed = 0
    for owner_id, memory_ids in by_owner.items():
        links = memory_links_refresh(owner=users[owner_id], memory_ids=memory_ids)
        for key, value in links.items():
            if isinstance(value, int):
                metrics[f"links_{key}"] = metrics.get(f"links_{key}", 0) + value
        changed += links.get("created", 0) + links.get("reinforced", 0)
    return changed, metrics


class LinkStep(Step):
    name = "link"
    batch_size = 200

    def due(self, scope: Scope):
        memories = scope.memories()
        if scope.changed_since is None:
            return memories
        return memories.filter(Q(updated_at__gte=scope.changed_since) | Q(created_at__gte=scope.changed_since))

    def process(self, scope: Scope, ids: list[int]) -> BatchOutcome:
        try:
            changed, metrics = _link(ids)
        except Exception:
            # Find the memory that breaks the batch: each one alone, the failing ones recorded.
            return one_by_one(ids, _link)
        return BatchOutcome(processed=len(ids), changed=changed, metrics=metrics)

    def finish(self, scope: Scope) -> dict:
        from graph.services import memory_links_expire

        owners = (get_user_model().objects.filter(pk=scope.owner_id) if scope.owner_id is not None
                  else get_user_model().objects.filter(memories__isnull=False).distinct())
        return {"links_expired": sum(memory_links_expire(owner=owner) for owner in owners)}
