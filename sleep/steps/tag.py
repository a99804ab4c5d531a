"""Tag: auto tags for memories whose tags are over 7 days old or whose content changed, and the
language of memories stored before languages were read (their tags are made again with it)."""

from __future__ import annotations

from django.db.models import Q

from memories.auto_tags import retag_due_filter
from memories.services import memories_autotag
from sleep.steps import BatchOutcome, Scope, Step


class TagStep(Step):
    name = "tag"
    batch_size = 500

    def due(self, scope: Scope):
        return scope.memories().filter(retag_due_filter(scope.now) | Q(language__isnull=True))

    def process(self, scope: Scope, ids: list[int]) -> BatchOutcome:
        result = memories_autotag(memory_ids=ids, now=scope.now)
        return BatchOutcome(
            processed=result.processed - len(result.failed),
            changed=result.changed,
            failures=[
                {"memoryId": memory_id, "message": message, "traceback": "memories.services.memories_autotag"}
                for memory_id, message in result.failed
            ],
        )
