"""The first lock of every memory write: the memory's row (see core.retry for the lock order); and the
lock on creating one content of an owner, so that concurrent writers never store it twice."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from django.http import Http404

from memories.models import Memory

# pg_advisory_xact_lock(namespace, hashtext('owner:key')) serialises creating one thing of an owner.
CONTENT_LOCK_NAMESPACE = 7_412


def memory_lock(memory_id: int) -> Memory:
    """Lock a memory's row for a write. A memory deleted or trashed meanwhile is a 404, which the API and
    the pages show as "not found" rather than as a server error."""
    locked = Memory.all_objects.select_for_update().filter(pk=memory_id).first()
    if locked is None:
        raise Http404("The memory no longer exists (it was deleted).")
    if locked.trashed_at is not None:
        raise Http404("The memory is in the trash; restore it to change it.")
    return locked


def content_locks(*, owner_id: int, keys: Iterable[str]) -> None:
    """Hold, until the transaction ends, the lock on creating each of the owner's keys (a content hash,
    or the key of anything else created once), so that of concurrent writers one at a time looks and
    creates. Taken in one order, so two writers never wait on each other in a circle."""
    with connection.cursor() as cursor:
        for key in sorted(set(keys)):
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [CONTENT_LOCK_NAMESPACE, f"{owner_id}:{key}"]
            )
