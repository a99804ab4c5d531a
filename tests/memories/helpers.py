"""Helpers for memories tests: age a memory, link two memories."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from graph.models import MemoryLink
from memories.models import Memory


def age(memory: Memory, *, days: float, **fields) -> Memory:
    """Pretend the memory was created and last opened `days` ago (the database sets created_at itself)."""
    then = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(created_at=then, last_accessed_at=then, **fields)
    memory.refresh_from_db()
    return memory


def link(a: Memory, b: Memory, *, days_ago: float = 30, reason=MemoryLink.Reason.SHARED_TAGS) -> MemoryLink:
    source, target = sorted((a, b), key=lambda m: m.pk)
    when = timezone.now() - timedelta(days=days_ago)
    row = MemoryLink.objects.create(
        owner=a.owner, source=source, target=target, reason=reason, score=0.5, confidence=0.5, last_reinforced_at=when
    )
    MemoryLink.objects.filter(pk=row.pk).update(created_at=when)
    return row
