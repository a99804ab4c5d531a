"""Writes of originals: keep a memory's file (from bytes, a stream or a file already stored), replace
it, remove files no memory references any more, and collect orphans.

The bytes live in the originals store (memories/original_files.py) keyed by owner and sha256; an Original
row per memory references them. A file is removed once the transaction that deleted its last row
commits (whichever way the row went: a purge from the trash, an account delete). A memory in the trash
keeps its original row, so its file stays until the memory is purged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from core.schedules import schedule_ensure
from memories import original_files as store
from memories.models import Memory, Original
from memories.original_files import OriginalFile

logger = logging.getLogger(__name__)

# An unreferenced file younger than this is left alone by originals_collect: it may belong to a
# transaction still running (a queued upload's file waits unreferenced for its worker).
ORPHAN_GRACE_SECONDS = 24 * 3600
COLLECT_SCHEDULE = "memories: remove originals no memory references"
COLLECT_EVERY_MINUTES = 60


@dataclass(frozen=True)
class StoredOriginal:
    """An original whose bytes are already in the store (a queued upload, an old release's bulk undo)."""

    name: str
    media_type: str
    size: int
    sha256: str
    page_count: int | None = None

    @classmethod
    def of(cls, original: Original) -> StoredOriginal:
        return cls(original.name, original.media_type, original.size, original.sha256, original.page_count)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "mediaType": self.media_type,
            "size": self.size,
            "sha256": self.sha256,
            "pageCount": self.page_count,
        }

    @classmethod
    def from_dict(cls, data: dict) -> StoredOriginal:
        return cls(data["name"], data["mediaType"], int(data["size"]), data["sha256"], data.get("pageCount"))


def original_from_upload(*, name: str, data: bytes, metadata: dict) -> OriginalFile | None:
    """The original to keep for an uploaded or synced file, or None when keeping is off or the file
    is over KYBERNESIS_ORIGINALS_MAX_MB (the memory is still made from its text)."""
    if not store.keeping() or not data:
        return None
    if len(data) > store.max_bytes():
        logger.info("original %s not kept: %s bytes is over the limit", name, len(data))
        return None
    pages = metadata.get("pageCount")
    return OriginalFile(
        name=store.safe_name(name),
        media_type=store.media_type_for(name, metadata.get("mime", "")),
        data=data,
        page_count=pages if isinstance(pages, int) else None,
    )


def original_stage(*, owner_id: int, original: OriginalFile) -> StoredOriginal:
    """Put the bytes in the store ahead of the memory (a queued upload): until a memory references
    them they are an orphan, kept for the grace period."""
    with transaction.atomic():
        sha256, size = store.store(owner_id, [original.data])
    return StoredOriginal(original.name, original.media_type, size, sha256, original.page_count)


def originals_attach(*, memories: Sequence[Memory], originals: Sequence[OriginalFile | StoredOriginal | None]) -> int:
    """Keep each memory's original (None: none to keep). Runs inside the caller's transaction, so a
    rollback leaves at most an unreferenced file, never a row pointing at nothing. A StoredOriginal
    whose file is gone (collected meanwhile) is skipped. Returns how many were kept."""
    rows = []
    with transaction.atomic():
        for memory, original in zip(memories, originals, strict=True):
            if original is None or not store.keeping():
                continue
            if isinstance(original, StoredOriginal):
                store.lock(memory.owner_id, original.sha256)
                if not store.exists(memory.owner_id, original.sha256):
                    logger.info("original %s of memory %s is no longer stored", original.name, memory.pk)
                    continue
                sha256, size = original.sha256, original.size
            else:
                sha256, size = store.store(memory.owner_id, [original.data])
            rows.append(
                Original(
                    owner_id=memory.owner_id,
                    memory=memory,
                    name=store.safe_name(original.name),
                    media_type=original.media_type[:150],
                    size=size,
                    page_count=original.page_count,
                    sha256=sha256,
                )
            )
        Original.objects.bulk_create(rows)
    return len(rows)


def original_keep_stream(
    *,
    memory: Memory,
    name: str,
    media_type: str,
    chunks: Iterable[bytes],
    expected_sha256: str,
    page_count: int | None = None,
) -> Original:
    """Keep an original read from a stream (an import), checking its size limit and its sha256.
    Raises OriginalError (nothing kept) when the bytes are over the limit or do not match."""
    with transaction.atomic():
        sha256, size = store.store(memory.owner_id, chunks, expected_sha256=expected_sha256)
        Original.objects.filter(memory=memory).delete()
        return Original.objects.create(
            owner_id=memory.owner_id,
            memory=memory,
            name=store.safe_name(name),
            media_type=store.media_type_for(name, media_type),
            size=size,
            page_count=page_count if isinstance(page_count, int) and page_count >= 0 else None,
            sha256=sha256,
        )


def memory_original_set(*, memory: Memory, original: OriginalFile | None) -> Original | None:
    """Replace a memory's original (a connector file that changed); None removes it. The old file goes
    once no memory of the owner references it."""
    with transaction.atomic():
        current = Original.objects.filter(memory=memory).first()
        if current is not None and original is not None and current.sha256 == original.sha256:
            if (current.name, current.media_type, current.page_count) != (
                original.name,
                original.media_type,
                original.page_count,
            ):
                current.name, current.media_type = store.safe_name(original.name), original.media_type[:150]
                current.page_count = original.page_count
                current.save(update_fields=["name", "media_type", "page_count"])
            return current
        if current is not None:
            current.delete()
        if original is None:
            return None
        originals_attach(memories=[memory], originals=[original])
        return Original.objects.filter(memory=memory).first()


# --- Removal -------------------------------------------------------------------------------------


def original_remove_if_unreferenced(*, owner_id: int, sha256: str) -> bool:
    """Remove the file unless a memory of the owner still references those bytes. True if removed."""
    with transaction.atomic():
        store.lock(owner_id, sha256)
        if Original.objects.filter(owner_id=owner_id, sha256=sha256).exists():
            return False
        store.remove(owner_id, sha256)
    return True


@receiver(post_delete, sender=Original, dispatch_uid="memories.remove_deleted_original")
def _original_deleted(sender, instance: Original, **kwargs) -> None:
    owner_id, sha256 = instance.owner_id, instance.sha256
    transaction.on_commit(lambda: original_remove_if_unreferenced(owner_id=owner_id, sha256=sha256))


def originals_collect(*, grace_seconds: int = ORPHAN_GRACE_SECONDS) -> int:
    """Remove stored files that no memory references and that are older than the grace period, and
    temp files left by a write that died. Returns how many files were removed."""
    removed = 0
    cutoff = time.time() - grace_seconds
    for owner_id, sha256, path in store.iter_stored():
        try:
            if path.stat().st_mtime > cutoff:
                continue
        except FileNotFoundError:
            continue
        if not sha256:
            path.unlink(missing_ok=True)
            removed += 1
        elif original_remove_if_unreferenced(owner_id=owner_id, sha256=sha256):
            removed += 1
    return removed


def originals_schedule_ensure() -> None:
    schedule_ensure(name=COLLECT_SCHEDULE, func="memories.tasks.originals_collect", minutes=COLLECT_EVERY_MINUTES)
