"""Tier: decay and tier for every memory in scope, set-based, with every move recorded."""

from __future__ import annotations

from memories.models import TierMove
from memories.services import memories_retier
from sleep.steps import BatchOutcome, Scope, Step


class TierStep(Step):
    name = "tier"
    batch_size = 5000

    def process(self, scope: Scope, ids: list[int]) -> BatchOutcome:
        result = memories_retier(memory_ids=ids, batch_size=len(ids), now=scope.now, cause=TierMove.Cause.SLEEP)
        metrics = {"moved": result.moved, **{f"moved_{k.replace('→', '_to_')}": v for k, v in result.moves.items()}}
        return BatchOutcome(processed=result.processed, changed=result.changed, metrics=metrics)
