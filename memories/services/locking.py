"""The first lock of every memory write: the memory's row (see core.retry for the lock order)."""

from __future__ import annotations

from django.http import Http404

from memories.models import Memory


def memory_lock(memory_id: int) -> Memory:
    """Lock a memory's row for a write. A memory deleted meanwhile is a 404, which the API and the
    pages show as "not found" rather than as a server error."""
    locked = Memory.objects.select_for_update().filter(pk=memory_id).first()
    if locked is None:
        raise Http404("The memory no longer exists (it was deleted).")
    return locked
