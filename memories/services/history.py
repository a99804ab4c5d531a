"""Version history writes: who a version is recorded for, the retention bound, a version looked up.

The versions themselves are written by PostgreSQL triggers (django-pghistory, memories.models.MemoryVersion)
on every insert of a memory and every update that changes a versioned field, whoever issues it. What
this module adds is the actor: a write inside `recording()` stamps its versions with core.actors'
current actor; a write outside it (a shell, a migration) records none and reads as "system".
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

import pghistory
import pgtrigger
from django.conf import settings
from django.db import connection
from django.http import Http404

from core.actors import current_actor
from memories.models import Memory, MemoryVersion

# Versions are counted from 1; a number past this is refused before it reaches the database's integer.
MAX_VERSION = 2_147_483_647


# Set only by history_off(): the benchmarks' "history off" side.
_paused: ContextVar[bool] = ContextVar("kybernesis_history_paused", default=False)
VERSION_TRIGGERS = ("memories.Memory:memory_version_created", "memories.Memory:memory_version_changed")


def paused() -> bool:
    return _paused.get()


@contextlib.contextmanager
def history_off() -> Iterator[None]:
    """Writes in this block, on this thread's connection, keep no versions and no activity entries
    (the version number still counts). Only for measuring what history costs (bench_history,
    bench_ingest --history off): no door turns it off. It sets pgtrigger's ignore setting for the
    session, as pgtrigger.ignore() does per statement (whose injection cannot mix with the named
    placeholders of the lexical index's SQL)."""
    ignored = []
    for model, trigger in pgtrigger.registry.registered(*VERSION_TRIGGERS):
        pgid = trigger.get_pgid(model)
        ignored += [f"{model._meta.db_table}:{pgid}", pgid]
    token = _paused.set(True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('pgtrigger.ignore', %s, false)", ["{" + ",".join(ignored) + "}"])
    try:
        yield
    finally:
        _paused.reset(token)
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('pgtrigger.ignore', '', false)")


@contextlib.contextmanager
def recording(**extra) -> Iterator[None]:
    """Versions written in this block name the current actor (and carry `extra`, e.g. the version a
    restore came from). Nested blocks join the outermost one."""
    if paused():
        yield
        return
    actor = current_actor()
    with pghistory.context(**actor.as_dict(), **extra):
        yield


def history_keep() -> int:
    return max(1, int(settings.KYBERNESIS_HISTORY_KEEP))


def versions_prune(*, memory_ids: Sequence[int], latest: int | None = None) -> int:
    """Keep the newest KYBERNESIS_HISTORY_KEEP versions of each memory (the current one always among
    them) and delete the older ones. Called by every service that makes versions, in its transaction,
    so one memory edited 10,000 times still holds at most that many. `latest`, the one memory's new
    version number when the caller knows it, saves the query while there is nothing to prune."""
    if not memory_ids or paused() or (latest is not None and latest <= history_keep()):
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM memories_memoryversion v USING memories_memory m "
            "WHERE m.id = ANY(%s) AND v.pgh_obj_id = m.id AND v.version <= m.version - %s",
            [list(memory_ids), history_keep()],
        )
        return cursor.rowcount


def version_number(value) -> int:
    """A version number from a path or a form: a whole number from 1; anything else is a 404 that
    says why (the API and pages show it as "not found")."""
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise Http404(f"{value!r} is not a version number; versions are numbered from 1.") from None
    if number < 1:
        raise Http404(f"There is no version {number}: versions are numbered from 1.")
    if number > MAX_VERSION:
        raise Http404(f"There is no version {number}.")
    return number


def version_get(*, memory: Memory, number) -> MemoryVersion:
    """One kept version of the memory, or a 404 that says which versions there are."""
    n = version_number(number)
    found = MemoryVersion.objects.filter(pgh_obj_id=memory.pk, version=n).first()
    if found is not None:
        return found
    latest = Memory.objects.filter(pk=memory.pk).values_list("version", flat=True).first()
    if latest is None:
        raise Http404("The memory no longer exists (it was deleted).")
    if n > latest:
        raise Http404(f"There is no version {n}: this memory's latest version is {latest}.")
    oldest = MemoryVersion.objects.filter(pgh_obj_id=memory.pk).order_by("version").values_list("version", flat=True)
    first = oldest.first()
    raise Http404(
        f"Version {n} is no longer kept: the oldest kept version is {first} (the newest {history_keep()} are kept)."
        if first is not None
        else f"Version {n} is not kept."
    )
