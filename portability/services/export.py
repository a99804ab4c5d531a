"""Export: the user's whole memory as a zip, written batch by batch as it downloads.

The zip holds manifest.json (format version, embedding model id, counts), memories.jsonl (one memory a
line, every field a person would miss: content, tags with confidences, tier and its history, times and
access counts, and optionally the chunk vectors), chat_sessions.jsonl, and originals/<sha256>.<ext>: the
kept original files, once per distinct content, each memory record's "original" pointing at its entry.
"""

from __future__ import annotations

import io
import json
import logging
import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from memories import original_files
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import ChatSession, Memory, Original, TierMove
from portability.services.vectors import embedding_model_id, vector_b64
from portability.sources import (
    CHAT_SESSIONS_FILE,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST,
    MEMORIES_FILE,
    ORIGINALS_DIR,
)

logger = logging.getLogger(__name__)

EXPORT_BATCH = 500


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def original_entry(original: Original) -> str:
    """The zip entry of an original: its sha256, with the extension of its name for a reader's sake."""
    ext = original.name.rpartition(".")[2] if "." in original.name.strip(".") else ""
    return f"{ORIGINALS_DIR}{original.sha256}" + (f".{ext.lower()}" if re.fullmatch(r"[A-Za-z0-9]{1,10}", ext) else "")


def original_record(original: Original) -> dict:
    return {
        "path": original_entry(original),
        "name": original.name,
        "mediaType": original.media_type,
        "size": original.size,
        "pageCount": original.page_count,
        "sha256": original.sha256,
    }


def memory_record(
    memory: Memory, *, moves: list[TierMove], chunks: list[tuple] | None, original: Original | None = None
) -> dict:
    """One memory as an export line. The keys are the API's camelCase names."""
    record = {
        "id": memory.pk,
        "title": memory.title,
        "content": memory.content,
        "contentHash": memory.content_hash,
        "source": memory.source,
        "metadata": memory.metadata,
        "notices": list(memory.notices),
        "titleEditedAt": _iso(memory.title_edited_at),
        "kindChosenAt": _iso(memory.kind_chosen_at),
        "manualTags": list(memory.manual_tags),
        "autoTags": memory.auto_tags,
        "autoTaggedAt": _iso(memory.auto_tagged_at),
        "autoTaggedHash": memory.auto_tagged_hash,
        "summary": memory.summary,
        "preview": memory.preview,
        "summarizedHash": memory.summarized_hash,
        "priority": memory.priority,
        "pinned": memory.pinned,
        "tier": memory.tier,
        "tierReason": memory.tier_reason,
        "tierChangedAt": _iso(memory.tier_changed_at),
        "decayScore": memory.decay_score,
        "tierHistory": [
            {
                "fromTier": m.from_tier,
                "toTier": m.to_tier,
                "reason": m.reason,
                "cause": m.cause,
                "movedAt": _iso(m.moved_at),
            }
            for m in moves
        ],
        "accessCount": memory.access_count,
        "lastAccessedAt": _iso(memory.last_accessed_at),
        "createdAt": _iso(memory.created_at),
        "updatedAt": _iso(memory.updated_at),
    }
    if memory.trashed_at is not None:
        record["trashedAt"] = _iso(memory.trashed_at)
        record["trashedBy"] = memory.trashed_by
    if memory.import_key:
        record["importKey"] = memory.import_key
    if original is not None:
        record["original"] = original_record(original)
    if chunks is not None:
        record["chunks"] = [
            {
                "position": position,
                "charStart": start,
                "charEnd": end,
                "textHash": text_hash,
                "embedding": vector_b64(vector),
                "embeddingKey": key,
            }
            for position, start, end, text_hash, vector, key in chunks
        ]
    return record


class _Sink(io.RawIOBase):
    """Where zipfile writes; the generator hands on whatever has gathered. Not seekable, so zipfile
    writes data descriptors after each entry instead of seeking back to fill in its header."""

    def __init__(self):
        self._buffer = bytearray()
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._buffer += data
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def take(self) -> bytes:
        data = bytes(self._buffer)
        self._buffer.clear()
        return data


def _memory_batches(owner, batch_size: int, *, include_trash: bool = False) -> Iterator[list[Memory]]:
    """The owner's memories in id order, a batch at a time (keyset pagination: memory stays flat); with
    `include_trash`, the trashed ones too."""
    last = 0
    memories = Memory.all_objects if include_trash else Memory.objects
    while True:
        batch = list(memories.filter(owner=owner, pk__gt=last).order_by("pk")[:batch_size])
        if not batch:
            return
        yield batch
        last = batch[-1].pk


def _keyset(qs: QuerySet, fields: tuple[str, ...], batch_size: int) -> Iterator:
    """The rows of qs in the order of `fields` (unique together), one query per batch: keyset
    pagination, never a server-side cursor. The export is read as the response streams, in
    autocommit, where `.iterator()` would DECLARE a WITH HOLD cursor and FETCH from it in later
    transactions, which a transaction pooler (PgBouncer) may send to a server connection that has no
    such cursor (docs/scaling.md, "Connection pooling")."""
    after = None
    while True:
        page = qs.order_by(*fields)
        if after is not None:
            # (a, b) > (x, y): a > x, or a = x and b > y.
            later = Q()
            for i, name in enumerate(fields):
                later |= Q(**dict(zip(fields[:i], after[:i], strict=True)), **{f"{name}__gt": after[i]})
            page = page.filter(later)
        batch = list(page[:batch_size])
        if not batch:
            return
        yield from batch
        after = tuple(getattr(batch[-1], name) for name in fields)


def _chunk_vectors(memory_ids: list[int]) -> dict[int, list[tuple]]:
    """memory id -> [(position, char start, char end, text hash, float32 vector, embedding key)]. The
    vectors are read as text and parsed by numpy: pgvector's Python parser would take most of an
    export's time. The key says which model and backend made each vector, from which text."""
    out: dict[int, list[tuple]] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT memory_id, position, char_start, char_end, text_hash, embedding::text, embedding_key "
            "FROM memories_memorychunk WHERE memory_id = ANY(%s) ORDER BY memory_id, position",
            [memory_ids],
        )
        for memory_id, position, start, end, text_hash, vector, key in cursor.fetchall():
            parsed = np.fromstring(vector[1:-1], dtype=np.float32, sep=",")
            out.setdefault(memory_id, []).append((position, start, end, text_hash, parsed, key))
    return out


def export_zip_stream(
    *, owner, vectors: bool = True, include_trash: bool = False, batch_size: int = EXPORT_BATCH
) -> Iterator[bytes]:
    """The export as zip bytes, produced batch by batch: 10,000 memories never sit in memory at once.
    The trash is left out unless `include_trash`; then its memories carry trashedAt."""
    sink = _Sink()
    archive = zipfile.ZipFile(sink, mode="w", compression=zipfile.ZIP_DEFLATED, compresslevel=1)
    try:
        yield from _export_entries(
            archive, sink, owner=owner, vectors=vectors, include_trash=include_trash, batch_size=batch_size
        )
    finally:
        if archive.fp is not None:
            # Stopped part-way (the download was cancelled, or a read failed): nothing more is written.
            # Left open, the archive would try to finish itself when collected, into a closed sink,
            # and log "Exception ignored in: ZipFile.__del__" for every cancelled download.
            archive.fp = None


def _export_entries(
    archive: zipfile.ZipFile, sink: _Sink, *, owner, vectors: bool, include_trash: bool, batch_size: int
) -> Iterator[bytes]:
    counts: Counter[str] = Counter()
    with archive.open(MEMORIES_FILE, mode="w", force_zip64=True) as out:
        for batch in _memory_batches(owner, batch_size, include_trash=include_trash):
            ids = [m.pk for m in batch]
            moves: dict[int, list[TierMove]] = {}
            for move in TierMove.objects.filter(memory_id__in=ids).order_by("memory_id", "moved_at", "id"):
                moves.setdefault(move.memory_id, []).append(move)
            chunks = _chunk_vectors(ids) if vectors else None
            kept = {o.memory_id: o for o in Original.objects.filter(memory_id__in=ids)}
            lines = [
                json.dumps(
                    memory_record(
                        m,
                        moves=moves.get(m.pk, []),
                        chunks=chunks.get(m.pk, []) if chunks is not None else None,
                        original=kept.get(m.pk),
                    ),
                    ensure_ascii=False,
                    separators=(",", ":"),
                )
                for m in batch
            ]
            out.write(("\n".join(lines) + "\n").encode("utf-8"))
            counts["memories"] += len(batch)
            counts["trashed"] += sum(1 for m in batch if m.trashed_at is not None)
            counts["chunks"] += sum(len(c) for c in (chunks or {}).values())
            if data := sink.take():  # the compressor may still hold a small batch back
                yield data
    with archive.open(CHAT_SESSIONS_FILE, mode="w") as out:
        for session in _keyset(ChatSession.objects.filter(owner=owner), ("pk",), 1000):
            out.write(
                (
                    json.dumps(
                        {
                            "id": session.pk,
                            "title": session.title,
                            "messageCount": session.message_count,
                            "createdAt": _iso(session.created_at),
                            "updatedAt": _iso(session.updated_at),
                            **({"importKey": session.import_key} if session.import_key else {}),
                        },
                        ensure_ascii=False,
                        separators=(",", ":"),
                    )
                    + "\n"
                ).encode("utf-8")
            )
            counts["chatSessions"] += 1
    for piece in _write_originals(archive, sink, owner, include_trash=include_trash):
        counts["originals"] += 1 if piece is None else 0
        if piece:
            yield piece
    manifest = {
        "format": FORMAT_NAME,
        "formatVersion": FORMAT_VERSION,
        "exportedAt": _iso(timezone.now()),
        "embeddingModel": embedding_model_id(),
        "embeddingDimensions": EMBEDDING_DIMENSIONS,
        "includesVectors": vectors,
        "includesTrash": include_trash,
        "chunkSize": settings.KYBERNESIS_CHUNK_SIZE,
        "chunkOverlap": settings.KYBERNESIS_CHUNK_OVERLAP,
        "counts": {
            "memories": counts["memories"],
            "trashed": counts["trashed"],
            "chunks": counts["chunks"],
            "chatSessions": counts["chatSessions"],
            "originals": counts["originals"],
        },
        "files": [MEMORIES_FILE, CHAT_SESSIONS_FILE, *([ORIGINALS_DIR] if counts["originals"] else [])],
    }
    archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
    archive.close()
    yield sink.take()


def _write_originals(archive: zipfile.ZipFile, sink: _Sink, owner, *, include_trash: bool) -> Iterator[bytes | None]:
    """Each distinct original of the owner into the zip, a megabyte at a time; yields the zip's bytes as
    they gather and None after each file written. A file missing from the store is left out (logged)."""
    seen: set[str] = set()
    originals = Original.objects.filter(owner=owner)
    if not include_trash:
        originals = originals.filter(memory__trashed_at=None)
    for original in _keyset(originals, ("sha256", "memory_id"), 500):
        entry = original_entry(original)
        if original.sha256 in seen:
            continue
        seen.add(original.sha256)
        try:
            handle = open(original_files.path_for(owner.pk, original.sha256), "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            logger.warning("export of owner %s: original %s is missing from the store", owner.pk, entry)
            continue
        with handle, archive.open(entry, mode="w", force_zip64=True) as out:
            while chunk := handle.read(original_files.COPY_CHUNK):
                out.write(chunk)
                if data := sink.take():
                    yield data
        yield None


def export_filename(owner) -> str:
    return f"kybernesis-export-{owner.pk}-{timezone.now():%Y%m%d-%H%M%S}.zip"


def export_to_file(*, owner, path: Path, vectors: bool = True, include_trash: bool = False) -> int:
    """Write the export to a file; returns its size in bytes."""
    size = 0
    with open(path, "wb") as handle:
        for data in export_zip_stream(owner=owner, vectors=vectors, include_trash=include_trash):
            handle.write(data)
            size += len(data)
    return size
