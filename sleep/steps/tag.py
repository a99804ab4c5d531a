"""Tag: auto tags for memories whose tags are over 7 days old or whose content changed."""

from __future__ import annotations

from django.db.models import F, Q

from memories.services import memories_autotag
from memories.tagging import RETAG_AFTER
from sleep.steps import BatchOutcome, Scope, Step


class TagStep(Step):
    name = "tag"
    batch_size = 500

    def due(self, scope: Scope):
        stale = scope.now - RETAG_AFTER
        return scope.memories().filter(Q(auto_tagged_at__isnull=True) | Q(auto_tagged_at__lt=stale)
                                       | ~Q(auto_tagged_hash=F("content_hash")))

    def process(self, scope: Scope, ids: list[int]) -> BatchOutcome:
        result = memories_autotag(memory_ids=ids, now=scope.now)
        return BatchOutcome(
            processed=result.processed - len(result.failed), changed=result.changed,
            failures=[{"memoryId": memory_id, "message": message, "traceback": "memories.services.memories_autotag"}
                      for memory_id, message in result.failed],
        )
