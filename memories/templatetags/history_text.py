"""Template filters for version history and the activity trail: what an entry says, in words."""

from __future__ import annotations

from django import template

from memories.diffs import FIELD_LABELS

register = template.Library()


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


@register.filter
def field_names(names) -> str:
    """["title", "manual_tags"] -> "title and manual tags"."""
    return _join([FIELD_LABELS.get(name, name).lower() for name in names or []])


def _tags(detail: dict) -> str:
    added, removed = detail.get("added") or [], detail.get("removed") or []
    what = "auto tags" if detail.get("auto") else "tag"
    parts = []
    if added:
        parts.append(f"added {what if len(added) == 1 or detail.get('auto') else what + 's'} {', '.join(added)}")
    if removed:
        parts.append(f"removed {what if len(removed) == 1 or detail.get('auto') else what + 's'} {', '.join(removed)}")
    return (_join(parts) or "tags unchanged").capitalize()


def _linked(detail: dict) -> str:
    count = detail.get("count", 0)
    names = [item.get("title") or f"#{item.get('id')}" for item in detail.get("with", [])]
    text = f"Linked to {count} memor{'y' if count == 1 else 'ies'}"
    if names:
        text += ": " + ", ".join(f"“{name}”" for name in names)
        if count > len(names):
            text += f" and {count - len(names)} more"
    return text


def _sentence(kind: str, detail: dict) -> str:
    fields = field_names(detail.get("fields") or [])
    if kind == "created":
        return "Created" + (f" ({detail['source']})" if detail.get("source") else "")
    if kind == "edited":
        return f"Edited {fields}" if fields else "Edited"
    if kind == "tagged":
        return _tags(detail)
    if kind == "linked":
        return _linked(detail)
    if kind == "synced":
        if detail.get("archived"):
            return f"Archived: {detail['archived']}"
        return f"Updated from its source ({fields})" if fields else "Updated from its source"
    if kind == "restored":
        return f"Restored version {detail.get('restoredFrom')}" + (f" ({fields})" if fields else "")
    if kind == "tier_moved":
        return f"Moved {detail.get('fromTier')} → {detail.get('toTier')}: {detail.get('reason', '')}".rstrip(": ")
    return {
        "pinned": "Pinned",
        "unpinned": "Unpinned",
        "summarised": "Summary written",
        "trashed": "Moved to the trash",
        "untrashed": "Restored from the trash",
        "purged": "Deleted forever",
        "imported": "Imported",
    }.get(kind, kind.replace("_", " ").capitalize())


@register.filter
def activity_text(entry) -> str:
    """What a trail entry (memories.history.TrailEntry) says happened, as a sentence."""
    return _sentence(entry.kind, entry.detail or {})
