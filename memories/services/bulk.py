"""Bulk actions on the memory list (tag, pin, unpin, delete) and the undo record each one leaves."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from memories.models import Memory
from memories.services import (
    MemoryInput,
    MemoryInputError,
    memories_restore_from_trash,
    memories_trash,
    memory_create_many,
    memory_pin,
    memory_tag_remove,
    memory_tags_add,
)
from memories.services.originals import StoredOriginal
from memories.tag_rules import TagError, normalize_tag

ACTIONS = ("tag", "pin", "unpin", "delete")
MAX_SELECTED = 100


@dataclass
class BulkResult:
    action: str
    count: int
    message: str
    undo: dict = field(default_factory=dict)  # JSON-serialisable: what memories_bulk_undo needs


def _selected_ids(memory_ids) -> list[int]:
    """The ticked ids, checked the same way by the preview and the action."""
    try:
        ids = sorted({int(i) for i in memory_ids})
    except (TypeError, ValueError):
        raise MemoryInputError("the selection holds something that is not a memory id", field="ids") from None
    if not ids:
        raise MemoryInputError("select at least one memory first", field="ids")
    if len(ids) > MAX_SELECTED:
        raise MemoryInputError(f"select at most {MAX_SELECTED} memories at once", field="ids")
    return ids


def memories_bulk(*, owner, memory_ids, action: str, tag: str = "") -> BulkResult:
    """Apply one action to the owner's selected memories. Ids that are not the owner's are ignored,
    as if they did not exist. Returns what changed and how to undo it."""
    if action not in ACTIONS:
        raise MemoryInputError(f"unknown action '{action}'; choose one of {', '.join(ACTIONS)}", field="action")
    ids = _selected_ids(memory_ids)
    memories = list(Memory.objects.for_user(owner).filter(pk__in=ids).order_by("pk"))
    if not memories:
        raise MemoryInputError("none of the selected memories exist any more", field="ids")
    n = len(memories)
    noun = f"{n} memor{'y' if n == 1 else 'ies'}"

    if action == "tag":
        try:
            tag = normalize_tag(tag)
        except TagError as exc:
            raise MemoryInputError(str(exc), field="tag") from None
        with transaction.atomic():
            added = [m.pk for m in memories if tag not in m.manual_tags]
            for memory in memories:
                if memory.pk in added:
                    memory_tags_add(memory=memory, tags=[tag])
        return BulkResult(action, n, f"Tagged {noun} with “{tag}”.", {"action": "untag", "tag": tag, "ids": added})

    if action in ("pin", "unpin"):
        pinned = action == "pin"
        with transaction.atomic():
            changed = [m.pk for m in memories if m.pinned != pinned]
            for memory in memories:
                if memory.pk in changed:
                    memory_pin(memory=memory, pinned=pinned)
        verb = "Pinned" if pinned else "Unpinned"
        return BulkResult(action, n, f"{verb} {noun}.", {"action": "unpin" if pinned else "pin", "ids": changed})

    # delete: into the trash, from where the undo (or the Trash page) restores them as they were.
    trashed = memories_trash(owner_id=owner.pk, memory_ids=[m.pk for m in memories])
    n = len(trashed)
    noun = f"{n} memor{'y' if n == 1 else 'ies'}"
    return BulkResult(action, n, f"Moved {noun} to the trash.", {"action": "untrash", "ids": trashed})


def memories_bulk_undo(*, owner, undo: dict) -> str:
    """Reverse a bulk action from its undo record; returns a message saying what was undone.
    Deleted memories come back from the trash as they were: same ids, chunks, tags, links and original."""
    action = undo.get("action")
    if action == "untag":
        tag = undo["tag"]
        memories = Memory.objects.for_user(owner).filter(pk__in=undo.get("ids", []))
        n = 0
        with transaction.atomic():
            for memory in memories:
                if tag in memory.manual_tags:
                    memory_tag_remove(memory=memory, tag=tag)
                    n += 1
        return f"Removed “{tag}” again from {n} memor{'y' if n == 1 else 'ies'}."
    if action in ("pin", "unpin"):
        memories = Memory.objects.for_user(owner).filter(pk__in=undo.get("ids", []))
        n = 0
        with transaction.atomic():
            for memory in memories:
                memory_pin(memory=memory, pinned=action == "pin")
                n += 1
        return f"{'Pinned' if action == 'pin' else 'Unpinned'} {n} memor{'y' if n == 1 else 'ies'} again."
    if action == "untrash":
        n = len(memories_restore_from_trash(owner_id=owner.pk, memory_ids=undo.get("ids", [])))
        return f"Restored {n} memor{'y' if n == 1 else 'ies'} from the trash."
    if action == "restore":
        # An undo record left by a release that deleted for good: the memories are stored again.
        items = undo.get("memories", [])
        restored = memory_create_many(
            owner=owner,
            items=[
                MemoryInput(
                    title=item["title"],
                    content=item["content"],
                    source=item["source"],
                    priority=item["priority"],
                    metadata=item["metadata"],
                    manual_tags=item["manualTags"],
                    original=StoredOriginal.from_dict(item["original"]) if item.get("original") else None,
                    notices=item.get("notices") or (),
                    title_chosen=item.get("titleChosen") is True,
                )
                for item in items
            ],
        )
        for memory, item in zip(restored, items, strict=True):
            if item.get("pinned"):
                memory_pin(memory=memory, pinned=True)
        n = len(restored)
        return f"Restored {n} memor{'y' if n == 1 else 'ies'}."
    raise MemoryInputError("there is nothing to undo", field="undo")


@dataclass
class BulkPreview:
    memories: list[Memory]
    tag: str = ""  # for "tag": the tag as it will be stored ("Reading List" becomes "reading-list")


def memories_bulk_preview(*, owner, memory_ids, action: str, tag: str = "") -> BulkPreview:
    """Check a bulk request the way memories_bulk would, without changing anything; returns the
    selected memories, and the tag as memories_bulk will store it, for the confirmation page."""
    if action not in ACTIONS:
        raise MemoryInputError(f"choose an action: {', '.join(ACTIONS)}", field="action")
    ids = _selected_ids(memory_ids)
    stored_tag = ""
    if action == "tag":
        try:
            stored_tag = normalize_tag(tag)
        except TagError as exc:
            raise MemoryInputError(str(exc), field="tag") from None
    memories = list(Memory.objects.for_user(owner).filter(pk__in=ids).defer("content").order_by("-created_at"))
    if not memories:
        raise MemoryInputError("none of the selected memories exist any more", field="ids")
    return BulkPreview(memories=memories, tag=stored_tag)
