"""Activity trail writes: one entry per memory and thing that happened to it, naming who did it."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils import timezone

from core.actors import current_actor
from memories.models import Activity, ActivityKind, Memory
from memories.services.history import paused


def _entry(memory: Memory, kind: str, detail: dict | None, now) -> Activity:
    if kind not in ActivityKind.values:
        raise ValueError(f"unknown activity kind {kind!r}")
    actor = current_actor()
    return Activity(
        owner_id=memory.owner_id,
        memory_id=memory.pk,
        memory_title=(memory.title or "")[:500],
        kind=kind,
        detail=detail or {},
        actor_kind=actor.kind,
        actor_label=actor.display[:200],
        actor_user_id=actor.user_id,
        actor_token_id=actor.token_id,
        created_at=now,
    )


def activity_record(*, memory: Memory, kind: str, detail: dict | None = None) -> Activity:
    """Record that `kind` (an ActivityKind value) happened to `memory`, by whoever is acting
    (core.actors.current_actor). The memory's title is kept with the entry, so the trail still reads
    after the memory is purged. Call it inside the write's transaction: it is kept only if that is."""
    entry = _entry(memory, kind, detail, timezone.now())
    if not paused():
        entry.save(force_insert=True)
    return entry


def activities_record(*, memories: Sequence[Memory], kind: str, details: Sequence[dict] | None = None) -> int:
    """The same kind of entry for many memories in one INSERT (the ingest path, a sleep step), with
    one detail per memory when `details` is given."""
    if not memories or paused():
        return 0
    now = timezone.now()
    if details is None:
        details = [{}] * len(memories)
    rows = [_entry(memory, kind, detail, now) for memory, detail in zip(memories, details, strict=True)]
    Activity.objects.bulk_create(rows, batch_size=1000)
    return len(rows)
