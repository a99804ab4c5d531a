"""Reads of memory versions and of the activity trail: owner-scoped lists, one version, a diff."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, CharField, F, QuerySet, Value, When
from django.db.models.functions import Coalesce, JSONObject
from django.shortcuts import get_object_or_404

from memories import diffs
from memories.models import VERSIONED_FIELDS, Activity, Memory, MemoryVersion, TierMove
from memories.services.history import version_get

# The versions list leaves the large texts out; changes between neighbours are told by content hash.
LIST_FIELDS = ("pgh_id", "pgh_obj_id", "pgh_created_at", "pgh_label", "pgh_context", "version", "title", "content_hash")
ACTOR_NONE = {"kind": "system", "label": "system"}


def _owned_memory(*, user, memory_id: int) -> Memory:
    """The user's memory, whatever its state (the history of a memory is read even while it is in the
    trash); another user's memory, or one purged, is a 404."""
    return get_object_or_404(Memory.objects.for_user(user).only("pk", "owner_id", "version", "title"), pk=memory_id)


def actor_of(context: dict | None) -> dict:
    """Who a version or entry names: {"kind", "label"} (a write outside any door reads as system)."""
    if not context:
        return dict(ACTOR_NONE)
    return {"kind": context.get("kind") or "system", "label": context.get("label") or context.get("kind") or "system"}


@dataclass
class VersionRow:
    """One row of the versions list: the version, who made it, and what it changed from the one before."""

    version: MemoryVersion
    actor: dict
    changed: list[str]
    restored_from: int | None
    current: bool


def version_rows(versions: list[MemoryVersion], *, current: int) -> list[VersionRow]:
    """Rows for a page of versions (newest first). What each changed is read against the version
    before it (kept versions are consecutive: retention removes the oldest), in one query per page."""
    if not versions:
        return []
    numbers = [v.version for v in versions]
    full = {
        v.version: v
        for v in MemoryVersion.objects.filter(
            pgh_obj_id=versions[0].pgh_obj_id, version__gte=min(numbers) - 1, version__lte=max(numbers)
        ).defer("content", "summary")
    }
    rows = []
    for v in versions:
        prev, this = full.get(v.version - 1), full.get(v.version)
        context = v.pgh_context or {}
        rows.append(
            VersionRow(
                version=v,
                actor=actor_of(context),
                changed=_changed(prev, this) if prev is not None and this is not None else [],
                restored_from=context.get("restoredFrom"),
                current=v.version == current,
            )
        )
    return rows


class VersionList:
    """A memory's versions as a sliceable, countable sequence of VersionRow, newest first (for the
    page's Paginator and the API's LimitOffset)."""

    def __init__(self, versions: QuerySet[MemoryVersion], *, current: int):
        self._versions, self.current = versions, current

    def count(self) -> int:
        return self._versions.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return version_rows(list(self._versions[index]), current=self.current)
        return version_rows([self._versions[index]], current=self.current)[0]


def memory_version_list(*, user, memory_id: int) -> VersionList:
    """The memory's kept versions as VersionRows, newest first."""
    memory = _owned_memory(user=user, memory_id=memory_id)
    versions = MemoryVersion.objects.filter(pgh_obj_id=memory.pk).only(*LIST_FIELDS).order_by("-version")
    return VersionList(versions, current=memory.version)


def _changed(old: MemoryVersion, new: MemoryVersion) -> list[str]:
    changed = []
    for name in VERSIONED_FIELDS:
        if name in ("content", "summary"):
            continue
        if getattr(old, name) != getattr(new, name):
            changed.append(name)
    if old.content_hash != new.content_hash:
        changed.insert(1 if "title" in changed else 0, "content")
    if old.summarized_hash != new.summarized_hash or old.preview != new.preview:
        changed.append("summary")
    return changed


def memory_version(*, user, memory_id: int, number) -> MemoryVersion:
    """One kept version with all its fields; a version number that is not kept is a 404 saying why."""
    return version_get(memory=_owned_memory(user=user, memory_id=memory_id), number=number)


def version_fields(version: MemoryVersion) -> dict:
    return {name: getattr(version, name) for name in VERSIONED_FIELDS}


def memory_version_changes(
    *, user, memory_id: int, number, diff_from=None
) -> tuple[MemoryVersion, MemoryVersion | None, list[dict]]:
    """A kept version, the version its changes are counted from (`diff_from`, by default the one before
    it when that is kept, else None) and the changes (memories.diffs.version_diff)."""
    memory = _owned_memory(user=user, memory_id=memory_id)
    version = version_get(memory=memory, number=number)
    if diff_from is not None:
        base: MemoryVersion | None = version_get(memory=memory, number=diff_from)
    else:
        base = MemoryVersion.objects.filter(pgh_obj_id=memory.pk, version=version.version - 1).first()
    changes = diffs.version_diff(version_fields(base), version_fields(version)) if base is not None else []
    return version, base, changes


def memory_versions_diff(*, user, memory_id: int, old, new) -> tuple[MemoryVersion, MemoryVersion, list[dict]]:
    """Two kept versions (either order) and what changed from the older to the newer (memories.diffs)."""
    memory = _owned_memory(user=user, memory_id=memory_id)
    a, b = version_get(memory=memory, number=old), version_get(memory=memory, number=new)
    if a.version > b.version:
        a, b = b, a
    return a, b, diffs.version_diff(version_fields(a), version_fields(b))


def memory_version_detail(*, user, memory_id: int, number, diff_from=None) -> dict:
    """memory_version_changes as the API's VersionDetailOut reads it."""
    version, base, changes = memory_version_changes(user=user, memory_id=memory_id, number=number, diff_from=diff_from)
    context = version.pgh_context or {}
    return {
        **version_fields(version),
        "version": version.version,
        "created_at": version.pgh_created_at,
        "actor": actor_of(context),
        "restored_from": context.get("restoredFrom"),
        "diff_from": base.version if base is not None else None,
        "changes": diffs.diff_as_json(changes),
    }


# --- the activity trail ------------------------------------------------------------------------------

TRAIL_FIELDS = ("id", "memory_id", "title", "kind", "detail", "actor_kind", "actor_label", "at", "source")

# A tier move's "actor" is the rule that moved it, named by its cause.
_TIER_ACTORS = {
    TierMove.Cause.SLEEP: ("sleep", "sleep agent (tier rules)"),
    TierMove.Cause.PIN: ("system", "tier rules, after a pin"),
    TierMove.Cause.EDIT: ("system", "tier rules, after an edit"),
    TierMove.Cause.CONNECTOR: ("connector", "tier rules, removed at the source"),
}


def _activity_values(qs: QuerySet[Activity]) -> QuerySet:
    return qs.annotate(
        title=Coalesce(F("memory__title"), F("memory_title"), output_field=CharField()),
        at=F("created_at"),
        source=Value("activity", output_field=CharField()),
    ).values_list(*TRAIL_FIELDS)


def _tier_values(qs: QuerySet[TierMove]) -> QuerySet:
    kind_case = Case(
        *(When(cause=cause, then=Value(kind)) for cause, (kind, _) in _TIER_ACTORS.items()),
        default=Value("system"),
        output_field=CharField(),
    )
    label_case = Case(
        *(When(cause=cause, then=Value(label)) for cause, (_, label) in _TIER_ACTORS.items()),
        default=Value("tier rules"),
        output_field=CharField(),
    )
    return qs.annotate(
        title=F("memory__title"),
        kind=Value("tier_moved", output_field=CharField()),
        detail=JSONObject(fromTier=F("from_tier"), toTier=F("to_tier"), reason=F("reason"), cause=F("cause")),
        actor_kind=kind_case,
        actor_label=label_case,
        at=F("moved_at"),
        source=Value("tier", output_field=CharField()),
    ).values_list(*TRAIL_FIELDS)


@dataclass
class TrailEntry:
    id: int
    memory_id: int | None
    title: str
    kind: str
    detail: dict
    actor_kind: str
    actor_label: str
    at: object
    source: str

    @property
    def key(self) -> str:
        return f"{self.source}-{self.id}"

    @property
    def actor(self) -> dict:
        return {"kind": self.actor_kind, "label": self.actor_label or self.actor_kind}


class Trail:
    """The trail as a sliceable, countable sequence of TrailEntry (Django's Paginator and the API's
    LimitOffset both take it): activity entries and tier moves in one time order, read as one UNION."""

    def __init__(self, activity: QuerySet[Activity], moves: QuerySet[TierMove]):
        self._activity, self._moves = activity, moves

    def count(self) -> int:
        return self._activity.count() + self._moves.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index):
        union = _activity_values(self._activity).union(_tier_values(self._moves), all=True).order_by("-at", "-id")
        if isinstance(index, slice):
            return [TrailEntry(*row) for row in union[index]]
        return TrailEntry(*union[index : index + 1][0])


def activity_trail(*, user, memory_id: int | None = None) -> Trail:
    """The account's activity (or one memory's), newest first: created, edited, tagged, pinned, linked,
    summarised, synced, restored, trashed and purged entries with their actor, and the tier moves."""
    activity = Activity.objects.for_user(user)
    moves = TierMove.objects.for_user(user)
    if memory_id is not None:
        memory = _owned_memory(user=user, memory_id=memory_id)
        activity, moves = activity.filter(memory_id=memory.pk), moves.filter(memory_id=memory.pk)
    return Trail(activity.order_by(), moves.order_by())
