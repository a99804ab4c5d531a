"""Accesses: a memory is accessed when a person or an agent uses it, not when it is merely shown.

Counted: opening the memory page (which is where a search result's link, `/memories/<id>/open`,
leads; the link itself counts nothing), `GET /api/v1/memories/{id}`, and an agent's read of the
memory. Not counted: appearing in search results, the memory list, a chat reply's related list or a
graph panel, and moving between pages of the chunks of a memory already open. The tier rules read
the count and the time of the last access, so only real uses may move them.
"""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from memories.models import Memory


def memory_open(*, memory: Memory) -> Memory:
    """Record one access of this memory (in one statement, so concurrent opens all count) and
    return it with the new count and time."""
    now = timezone.now()
    Memory.objects.filter(pk=memory.pk).update(access_count=F("access_count") + 1, last_accessed_at=now)
    memory.refresh_from_db(fields=["access_count", "last_accessed_at"])
    return memory


def memory_accesses_reset(*, owner=None) -> int:
    """Forget every recorded access (of one owner, or of everyone): the count and last access time.

    For counts recorded while every search result also counted as an access (migration 0015 reset
    them once): no log says which were real opens, so none can be kept. Returns how many memories had
    any recorded."""
    memories = Memory.objects.exclude(access_count=0, last_accessed_at__isnull=True)
    if owner is not None:
        memories = memories.filter(owner=owner)
    return memories.update(access_count=0, last_accessed_at=None)
