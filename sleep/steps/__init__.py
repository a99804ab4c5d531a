"""The four steps of a sleep cycle, in the spec's order. Each walks memories in id order, in batches."""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction

from memories.models import Memory


@dataclass
class Scope:
    """What one cycle covers: one user's memories, or everyone's (owner_id None)."""

    owner_id: int | None
    now: datetime
    # Memories changed since this moment need linking again (None: all of them).
    changed_since: datetime | None = None

    def memories(self):
        qs = Memory.objects.all()
        return qs if self.owner_id is None else qs.filter(owner_id=self.owner_id)


@dataclass
class BatchOutcome:
    processed: int = 0
    changed: int = 0
    failures: list[dict] = field(default_factory=list)  # {"memoryId", "message", "traceback"}
    metrics: dict = field(default_factory=dict)  # step-specific counters, summed over batches


def failure(memory_id: int, exc: BaseException) -> dict:
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    where = " ← ".join(f"{f.name} ({f.filename.rsplit('/', 1)[-1]}:{f.lineno})" for f in reversed(frames))
    return {"memoryId": memory_id, "message": f"{type(exc).__name__}: {exc}"[:500], "traceback": where[:500]}


def one_by_one(ids: list[int], work) -> BatchOutcome:
    """Run `work([id])` for each memory in its own savepoint, so one failing memory is recorded and
    skipped while the others are still processed. `work` returns (changed, metrics)."""
    outcome = BatchOutcome()
    for memory_id in ids:
        try:
            with transaction.atomic():
                changed, metrics = work([memory_id])
        except Exception as exc:  # noqa: BLE001 - recorded against the memory; the step goes on
            outcome.failures.append(failure(memory_id, exc))
            continue
        outcome.processed += 1
        outcome.changed += changed
        for key, value in metrics.items():
            outcome.metrics[key] = outcome.metrics.get(key, 0) + value
    return outcome


class Step:
    """A step: which memories are due after a checkpoint, and what to do with a batch of them."""

    name: str
    batch_size: int = 500

    def due(self, scope: Scope):
        """The memories this step must visit (a queryset of Memory)."""
        return scope.memories()

    def next_batch(self, scope: Scope, after_id: int) -> list[int]:
        return list(
            self.due(scope).filter(pk__gt=after_id).order_by("pk").values_list("pk", flat=True)[: self.batch_size]
        )

    def process(self, scope: Scope, ids: list[int]) -> BatchOutcome:
        raise NotImplementedError

    def finish(self, scope: Scope) -> dict:
        """Work after the last batch (e.g. expiring stale links); returns extra metrics."""
        return {}
