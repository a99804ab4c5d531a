"""Restoring a version of a memory: its fields written back through the memory update path."""

from __future__ import annotations

from core.retry import run_with_retry
from memories.models import Memory
from memories.services.history import version_get
from memories.services.memory import restore_write


def memory_version_restore(*, memory: Memory, number) -> Memory:
    """Make the memory what version `number` was: title, content, manual and auto tags, summary,
    priority, pin and metadata. It goes through the memory update path, so the content is re-chunked
    and re-embedded and search finds it again, and the restore is itself a new version (restoring a
    version that is already the current state changes nothing). A memory edited meanwhile keeps that
    edit as a version of its own; two restores at once queue on the memory's row lock."""
    target = version_get(memory=memory, number=number)
    fields = {
        "title": target.title,
        "content": target.content,
        "manual_tags": list(target.manual_tags),
        "auto_tags": list(target.auto_tags),
        "summary": target.summary,
        "preview": target.preview,
        "summarized_hash": target.summarized_hash,
        "priority": target.priority,
        "pinned": target.pinned,
        "metadata": dict(target.metadata or {}),
    }
    return run_with_retry(
        lambda: restore_write(memory_id=memory.pk, fields=fields, restored_from=target.version),
        label="memory_version_restore",
    )
