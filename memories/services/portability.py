"""Export and import of a user's whole memory: a streamed zip out, and the same zip (or JSON Lines, or
Markdown notes) back in, one transaction per memory, idempotent by content hash.

The zip holds manifest.json (format version, embedding model id, counts), memories.jsonl (one memory a
line, every field a person would miss: content, tags with confidences, tier and its history, times and
access counts, and optionally the chunk vectors), chat_sessions.jsonl, and originals/<sha256>.<ext>: the
kept original files, once per distinct content, each memory record's "original" pointing at its entry.
An import checks each original's size and sha256 and keeps it in the same transaction as its memory.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import re
import uuid
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django_q.tasks import async_task

from memories import embedding, lexical, originals, tiering
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.import_sources import (
    CHAT_SESSIONS_FILE,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST,
    MEMORIES_FILE,
    ORIGINALS_DIR,
    ImportSourceError,
    Item,
    Source,
    open_source,
)
from memories.models import (
    ChatSession,
    ImportJob,
    Memory,
    MemoryChunk,
    Original,
    Tier,
    TierMove,
    content_hash,
)
from memories.models import Source as MemorySource
from memories.originals import OriginalError
from memories.services.memory import chunk_rows, chunks_for
from memories.services.originals import original_keep_stream
from memories.services.tags import autotag
from memories.services.tiers import tier_facts
from memories.services.validation import (
    MemoryInputError,
    MemoryTooLargeError,
    clean_content,
    clean_metadata,
    clean_priority,
    clean_source,
    clean_tags,
    clean_title,
)
from memories.signals import content_changed_on_commit

logger = logging.getLogger(__name__)

EXPORT_BATCH = 500
IMPORT_BATCH = 64
MAX_REPORTED_ERRORS = 1000


def embedding_model_id() -> str:
    # The weights and the backend: int8 vectors are not reused as fp32 ones, nor the reverse.
    return embedding.backend_id()


# --- Export --------------------------------------------------------------------------------------


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def _vector_b64(vector) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


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
    if original is not None:
        record["original"] = original_record(original)
    if chunks is not None:
        record["chunks"] = [
            {
                "position": position,
                "charStart": start,
                "charEnd": end,
                "textHash": text_hash,
                "embedding": _vector_b64(vector),
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


def _memory_batches(owner, batch_size: int) -> Iterator[list[Memory]]:
    """The owner's memories in id order, a batch at a time (keyset pagination: memory stays flat)."""
    last = 0
    while True:
        batch = list(Memory.objects.filter(owner=owner, pk__gt=last).order_by("pk")[:batch_size])
        if not batch:
            return
        yield batch
        last = batch[-1].pk


def _keyset(qs: QuerySet, fields: tuple[str, ...], batch_size: int) -> Iterator:
    """The rows of qs in the order of `fields` (unique together), one query per batch: keyset
    pagination, never a server-side cursor. The export is read as the response streams, in
    autocommit, where `.iterator()` would DECLARE a WITH HOLD cursor and FETCH from it in later
    transactions, which a transaction pooler (PgBouncer) may send to a server connection that has no
    such cursor (README, "Connection pooling")."""
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


def export_zip_stream(*, owner, vectors: bool = True, batch_size: int = EXPORT_BATCH) -> Iterator[bytes]:
    """The export as zip bytes, produced batch by batch: 10,000 memories never sit in memory at once."""
    sink = _Sink()
    archive = zipfile.ZipFile(sink, mode="w", compression=zipfile.ZIP_DEFLATED, compresslevel=1)
    counts = Counter()
    with archive.open(MEMORIES_FILE, mode="w", force_zip64=True) as out:
        for batch in _memory_batches(owner, batch_size):
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
                        },
                        ensure_ascii=False,
                        separators=(",", ":"),
                    )
                    + "\n"
                ).encode("utf-8")
            )
            counts["chatSessions"] += 1
    for data in _write_originals(archive, sink, owner):
        counts["originals"] += 1 if data is None else 0
        if data:
            yield data
    manifest = {
        "format": FORMAT_NAME,
        "formatVersion": FORMAT_VERSION,
        "exportedAt": _iso(timezone.now()),
        "embeddingModel": embedding_model_id(),
        "embeddingDimensions": EMBEDDING_DIMENSIONS,
        "includesVectors": vectors,
        "chunkSize": settings.KYBERNESIS_CHUNK_SIZE,
        "chunkOverlap": settings.KYBERNESIS_CHUNK_OVERLAP,
        "counts": {
            "memories": counts["memories"],
            "chunks": counts["chunks"],
            "chatSessions": counts["chatSessions"],
            "originals": counts["originals"],
        },
        "files": [MEMORIES_FILE, CHAT_SESSIONS_FILE, *([ORIGINALS_DIR] if counts["originals"] else [])],
    }
    archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
    archive.close()
    yield sink.take()


def _write_originals(archive: zipfile.ZipFile, sink: _Sink, owner) -> Iterator[bytes | None]:
    """Each distinct original of the owner into the zip, a megabyte at a time; yields the zip's bytes as
    they gather and None after each file written. A file missing from the store is left out (logged)."""
    seen: set[str] = set()
    for original in _keyset(Original.objects.filter(owner=owner), ("sha256", "memory_id"), 500):
        entry = original_entry(original)
        if original.sha256 in seen:
            continue
        seen.add(original.sha256)
        try:
            handle = open(originals.path_for(owner.pk, original.sha256), "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            logger.warning("export of owner %s: original %s is missing from the store", owner.pk, entry)
            continue
        with handle, archive.open(entry, mode="w", force_zip64=True) as out:
            while chunk := handle.read(originals.COPY_CHUNK):
                out.write(chunk)
                if data := sink.take():
                    yield data
        yield None


def export_filename(owner) -> str:
    return f"kybernesis-export-{owner.pk}-{timezone.now():%Y%m%d-%H%M%S}.zip"


def export_to_file(*, owner, path: Path, vectors: bool = True) -> int:
    """Write the export to a file; returns its size in bytes."""
    size = 0
    with open(path, "wb") as handle:
        for data in export_zip_stream(owner=owner, vectors=vectors):
            handle.write(data)
            size += len(data)
    return size


# --- Import --------------------------------------------------------------------------------------


@dataclass
class ImportReport:
    processed: int = 0
    created: int = 0
    duplicates: int = 0
    failed: int = 0
    errors: list[dict] = field(default_factory=list)
    error: str = ""  # the whole source could not be read
    total: int | None = None

    def fail(self, label: str, message: str) -> None:
        self.failed += 1
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append({"item": label, "error": message})

    def as_dict(self) -> dict:
        return {
            "processed": self.processed,
            "created": self.created,
            "duplicates": self.duplicates,
            "failed": self.failed,
            "errors": self.errors,
            "error": self.error,
            "total": self.total,
        }


class _RecordError(ValueError):
    pass


def _field(record: dict, name: str, kind, default=None, *, required: bool = False):
    value = record.get(name, default)
    if value is None:
        if required:
            raise _RecordError(f"{name} is missing")
        return default
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind in (int, float) and isinstance(value, bool)):
        raise _RecordError(f"{name} must be {_KIND_NAMES.get(kind, kind.__name__)}")
    return value


_KIND_NAMES = {
    str: "a string",
    float: "a number",
    int: "a whole number",
    bool: "true or false",
    list: "a list",
    dict: "a JSON object",
}


def _time(record: dict, name: str, default=None):
    value = record.get(name)
    if value is None:
        return default
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise _RecordError(f"{name} is not an ISO 8601 date and time: {value!r}")
    if timezone.is_naive(parsed):
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _unit(record: dict, name: str, default=None):
    value = _field(record, name, float, default)
    if value is not None and not 0.0 <= value <= 1.0:
        raise _RecordError(f"{name} must be from 0 to 1, got {value}")
    return value


def _choice(record: dict, name: str, choices, default):
    value = _field(record, name, str, default)
    if value not in choices:
        raise _RecordError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _auto_tags(record: dict) -> list[dict] | None:
    value = record.get("autoTags")
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(t, dict) and isinstance(t.get("tag"), str) and isinstance(t.get("confidence"), (int, float))
        for t in value
    ):
        raise _RecordError('autoTags must be a list of {"tag": string, "confidence": number}')
    return [{"tag": t["tag"], "confidence": float(t["confidence"])} for t in value]


@dataclass
class _Prepared:
    label: str
    memory: Memory
    chunks: list
    vectors: list  # one per chunk: a vector, or None to embed
    moves: list[TierMove]
    restore_tier: bool  # the record carries its tier; otherwise the rules decide, as for a new memory
    session_ref: int | None
    original: dict | None = None  # the record's "original", checked: path, name, mediaType, sha256, pageCount


def _prepare(record: dict, *, label: str, owner, vectors: VectorReuse, now) -> _Prepared:
    """Validate a record with the same rules (and messages) as the API, and build the unsaved memory."""
    memory = _memory_from_record(record, owner=owner, now=now)
    _restore_auto_tags(memory, record, now=now)
    restore_tier = _restore_tier(memory, record, now=now)
    memory.sync_derived_fields()
    if (expected := record.get("contentHash")) is not None and expected != memory.content_hash:
        raise _RecordError("contentHash does not match the content (was the file edited?)")
    moves = _tier_moves(record, owner=owner, now=now)
    chunks = chunks_for(memory.content)
    known = _known_vectors(record) if vectors.included else {}
    session_ref = memory.metadata.get("sessionId") if memory.source == MemorySource.CHAT else None
    return _Prepared(
        label=label,
        memory=memory,
        chunks=chunks,
        vectors=[vectors.reusable(known.get(content_hash(chunk.text)), memory.title, chunk.text) for chunk in chunks],
        moves=moves,
        restore_tier=restore_tier,
        session_ref=session_ref if isinstance(session_ref, int) else None,
        original=_original_spec(record.get("original")),
    )


def _memory_from_record(record: dict, *, owner, now) -> Memory:
    """The unsaved memory: the API's own checks for the fields a person writes (the same messages),
    then the stored state (summary, accesses, times) as exported."""
    try:
        content = clean_content(record.get("content"), index=None)
        source = clean_source(record.get("source", MemorySource.UPLOAD), index=None)
        manual_tags = clean_tags(record.get("manualTags") or [], index=None)
        priority = clean_priority(record.get("priority"), index=None)
        metadata = clean_metadata(record.get("metadata"), index=None)
        title = clean_title(record.get("title"), content, index=None)
    except MemoryInputError as exc:
        raise _RecordError(f"{exc.field}: {exc}" if exc.field else str(exc)) from None
    if priority is None:
        priority = tiering.default_priority(
            source=source, manual_tag_count=len(manual_tags), content_chars=len(content)
        )
    created_at = _time(record, "createdAt", now)
    memory = Memory(
        owner=owner,
        title=title,
        content=content,
        source=source,
        metadata=metadata,
        manual_tags=manual_tags,
        priority=priority,
        pinned=_field(record, "pinned", bool, False),
        summary=_field(record, "summary", str, ""),
        preview=_field(record, "preview", str, "")[:200],
        summarized_hash=_field(record, "summarizedHash", str, "")[:64],
        access_count=_field(record, "accessCount", int, 0),
        last_accessed_at=_time(record, "lastAccessedAt"),
        created_at=created_at,
        updated_at=_time(record, "updatedAt", created_at),
        tier_changed_at=created_at,
    )
    if memory.access_count < 0:
        raise _RecordError("accessCount must not be negative")
    return memory


def _restore_auto_tags(memory: Memory, record: dict, *, now) -> None:
    """The exported auto tags as they were, or fresh ones when the record has none."""
    auto_tags = _auto_tags(record)
    if auto_tags is None:
        autotag(memory, now=now)
        return
    memory.auto_tags = auto_tags
    memory.auto_tagged_at = _time(record, "autoTaggedAt")
    memory.sync_derived_fields()
    memory.auto_tagged_hash = _field(record, "autoTaggedHash", str, "")[:64]


def _restore_tier(memory: Memory, record: dict, *, now) -> bool:
    """The exported tier (True), or the tier rules' decision for a new memory (False)."""
    if record.get("tier") is None:
        decision = tiering.evaluate_tier(tier_facts(memory), now=now, policy=tiering.TierPolicy.from_settings())
        memory.tier, memory.decay_score, memory.tier_reason = decision.tier, decision.decay, decision.reason
        return False
    memory.tier = _choice(record, "tier", Tier.values, Tier.HOT)
    memory.tier_reason = _field(record, "tierReason", str, "")[:200]
    memory.tier_changed_at = _time(record, "tierChangedAt")
    memory.decay_score = _unit(record, "decayScore", 0.0)
    return True


def _tier_moves(record: dict, *, owner, now) -> list[TierMove]:
    history = record.get("tierHistory") or []
    if not isinstance(history, list):
        raise _RecordError("tierHistory must be a list")
    moves = []
    for i, move in enumerate(history):
        if not isinstance(move, dict):
            raise _RecordError(f"tierHistory[{i}] must be a JSON object")
        moves.append(
            TierMove(
                owner=owner,
                from_tier=_choice(move, "fromTier", Tier.values, None),
                to_tier=_choice(move, "toTier", Tier.values, None),
                reason=_field(move, "reason", str, "")[:200],
                cause=_choice(move, "cause", TierMove.Cause.values, TierMove.Cause.SLEEP),
                moved_at=_time(move, "movedAt", now),
            )
        )
    return moves


@dataclass(frozen=True)
class VectorReuse:
    """Whether an exported chunk vector may be stored as this instance's own, so that search never
    compares vectors of two models. A chunk exported with its `embeddingKey` is reused only when that
    key is the one this instance would give the same text under the same title (same model, backend
    and embedded text), whatever the manifest says; a chunk without one (older exports) only when the
    manifest names this instance's model and backend."""

    included: bool  # the export carries vectors of the right dimension
    model_matches: bool  # its manifest names this instance's model and backend

    def reusable(self, exported: tuple[np.ndarray, str | None] | None, title: str, text: str) -> np.ndarray | None:
        if exported is None:
            return None
        vector, key = exported
        if key is None:
            return vector if self.model_matches else None
        return vector if key == embedding.embedding_key(embedding.chunk_embedding_text(title, text)) else None


def _known_vectors(record: dict) -> dict[str, tuple[np.ndarray, str | None]]:
    """The exported chunk vectors, with the embedding key each was exported with, by chunk text hash."""
    known: dict[str, tuple[np.ndarray, str | None]] = {}
    for item in record.get("chunks") or []:
        try:
            vector = np.frombuffer(base64.b64decode(item["embedding"], validate=True), dtype="<f4")
        except (KeyError, TypeError, ValueError):
            raise _RecordError("chunks: an embedding is not base64 float32") from None
        key = item.get("embeddingKey")
        if vector.shape == (EMBEDDING_DIMENSIONS,) and np.isfinite(vector).all():
            known[str(item.get("textHash"))] = (vector, key if isinstance(key, str) and key else None)
    return known


_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def _original_spec(value) -> dict | None:
    """The record's "original" checked for shape; its bytes are read and verified when it is saved."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _RecordError("original must be a JSON object")
    path = _field(value, "path", str, required=True)
    name = _field(value, "name", str, required=True)
    sha256 = _field(value, "sha256", str, required=True)
    if not _SHA256_HEX.match(sha256):
        raise _RecordError("original.sha256 must be 64 lowercase hex digits")
    pages = _field(value, "pageCount", int, None)
    return {
        "path": path,
        "name": name,
        "mediaType": _field(value, "mediaType", str, ""),
        "sha256": sha256,
        "pageCount": pages if pages is not None and pages >= 0 else None,
    }


def _save(prepared: _Prepared, *, sessions: dict[int, int], open_original=None) -> Memory:
    """One memory with its chunks, lexical postings, tier history and original, in one transaction:
    an original that is over the limit or does not match its sha256 leaves nothing of the memory."""
    memory = prepared.memory
    if prepared.session_ref is not None:
        if prepared.session_ref in sessions:
            memory.metadata = {
                **memory.metadata,
                "sessionId": sessions[prepared.session_ref],
                "userId": memory.owner_id,
            }
        else:  # a chat message whose session did not come along: it must not claim one of this account's
            memory.metadata = {k: v for k, v in memory.metadata.items() if k not in ("sessionId", "userId")}
    times = {"created_at": memory.created_at, "updated_at": memory.updated_at}
    with transaction.atomic():
        memory.save(force_insert=True)
        # auto_now and auto_now_add overwrite on insert; the record's own times are put back.
        Memory.objects.filter(pk=memory.pk).update(**times)
        memory.created_at, memory.updated_at = times["created_at"], times["updated_at"]
        MemoryChunk.objects.bulk_create(chunk_rows(memory, prepared.chunks, prepared.vectors), batch_size=500)
        for move in prepared.moves:
            move.memory = memory
        TierMove.objects.bulk_create(prepared.moves)
        lexical.index_memories(owner_id=memory.owner_id, memory_ids=[memory.pk])
        if prepared.original is not None and open_original is not None and originals.keeping():
            _restore_original(memory, prepared.original, open_original)
    return memory


def _restore_original(memory: Memory, spec: dict, open_original) -> None:
    try:
        with open_original(spec["path"], originals.max_bytes()) as stream:
            original_keep_stream(
                memory=memory,
                name=spec["name"],
                media_type=spec["mediaType"],
                chunks=iter(lambda: stream.read(originals.COPY_CHUNK), b""),
                expected_sha256=spec["sha256"],
                page_count=spec["pageCount"],
            )
    except (ImportSourceError, OriginalError, zipfile.BadZipFile, EOFError) as exc:
        raise _OriginalRefused(str(exc)) from None


class _OriginalRefused(ValueError):
    pass


def _restore_sessions(owner, rows: list[dict]) -> dict[int, int]:
    """Chat sessions by their exported id -> this account's id; one already here (same title and start)
    is reused, so a second import adds none."""
    mapping = {}
    for row in rows:
        if not isinstance(row.get("id"), int):
            continue
        created = parse_datetime(row.get("createdAt") or "") or timezone.now()
        updated = parse_datetime(row.get("updatedAt") or "") or created
        title = str(row.get("title") or "")[:200]
        session = ChatSession.objects.filter(owner=owner, title=title, created_at=created).first()
        if session is None:
            session = ChatSession.objects.create(owner=owner, title=title)
            ChatSession.objects.filter(pk=session.pk).update(
                created_at=created, updated_at=updated, message_count=max(0, int(row.get("messageCount") or 0))
            )
        mapping[row["id"]] = session.pk
    return mapping


class _Duplicates:
    """Idempotence by content hash: the k-th record with a given hash is a duplicate when the account
    already held at least k memories with it before this import began."""

    def __init__(self, owner):
        self.owner, self.before, self.seen = owner, {}, Counter()

    def check(self, records_hashes: list[str]) -> list[bool]:
        unknown = [h for h in set(records_hashes) if h not in self.before]
        if unknown:
            counts = Counter(
                Memory.objects.filter(owner=self.owner, content_hash__in=unknown).values_list("content_hash", flat=True)
            )
            self.before.update({h: counts.get(h, 0) for h in unknown})
        out = []
        for h in records_hashes:
            self.seen[h] += 1
            out.append(self.seen[h] <= self.before[h])
        return out


def import_source(
    *, owner, source: Source, progress: Callable[[ImportReport], None] | None = None, batch_size: int = IMPORT_BATCH
) -> ImportReport:
    """Import every item of a source. Each memory is stored in its own transaction, so a bad item is
    reported and skipped while the rest go in; embedding is batched across memories for speed."""
    report = ImportReport(total=source.total)
    for item in source.errors:
        report.processed += 1
        report.fail(item.label, item.error)
    manifest = source.manifest
    included = bool(manifest.get("includesVectors")) and manifest.get("embeddingDimensions") == EMBEDDING_DIMENSIONS
    reuse = VectorReuse(
        included=included, model_matches=included and manifest.get("embeddingModel") == embedding_model_id()
    )
    sessions = _restore_sessions(owner, source.chat_sessions) if source.chat_sessions else {}
    duplicates = _Duplicates(owner)
    extra = {"open_original": source.open_original}
    batch: list[Item] = []
    try:
        for item in source.items:
            batch.append(item)
            if len(batch) >= batch_size:
                _import_batch(owner, batch, report, reuse=reuse, sessions=sessions, duplicates=duplicates, **extra)
                batch = []
                if progress:
                    progress(report)
        if batch:
            _import_batch(owner, batch, report, reuse=reuse, sessions=sessions, duplicates=duplicates, **extra)
    except ImportSourceError as exc:  # the archive broke mid-way (an entry that inflates past its size)
        report.error = str(exc)
    if progress:
        progress(report)
    return report


def _import_batch(
    owner,
    batch: list[Item],
    report: ImportReport,
    *,
    reuse: VectorReuse,
    sessions: dict,
    duplicates: _Duplicates,
    open_original=None,
) -> None:
    now = timezone.now()
    prepared: list[_Prepared] = []
    for item in batch:
        report.processed += 1
        if item.error:
            report.fail(item.label, item.error)
            continue
        try:
            prepared.append(_prepare(item.record, label=item.label, owner=owner, vectors=reuse, now=now))
        except _RecordError as exc:
            report.fail(item.label, str(exc))
    fresh = []
    for p, duplicate in zip(prepared, duplicates.check([p.memory.content_hash for p in prepared]), strict=True):
        if duplicate:
            report.duplicates += 1
        else:
            fresh.append(p)
    missing = [(p, i) for p in fresh for i, v in enumerate(p.vectors) if v is None]
    if missing:
        vectors = embedding.embed_texts(
            [embedding.chunk_embedding_text(p.memory.title, p.chunks[i].text) for p, i in missing]
        )
        for (p, i), vector in zip(missing, vectors, strict=True):
            p.vectors[i] = vector
    created = []
    for p in fresh:
        try:
            created.append(_save(p, sessions=sessions, open_original=open_original).pk)
            report.created += 1
        except _OriginalRefused as exc:
            report.fail(p.label, f"not imported: {exc}")
        except Exception as exc:  # one memory's failure must not stop the rest; it is reported by name
            logger.exception("import of %s failed", p.label)
            report.fail(p.label, f"could not be stored: {exc}")
    if created:
        # Graph extraction and links (wikilinks included) follow in the worker, as for any new memory.
        content_changed_on_commit(memory_ids=created)


def import_path(*, owner, path: Path, name: str = "", progress=None) -> ImportReport:
    try:
        source = open_source(Path(path), name)
    except ImportSourceError as exc:
        return ImportReport(error=str(exc))
    return import_source(owner=owner, source=source, progress=progress)


# --- Import jobs (the API and the page) ----------------------------------------------------------


def _imports_dir() -> Path:
    path = Path(settings.DATA_DIR) / "imports"
    path.mkdir(parents=True, exist_ok=True)
    return path


ACCEPTED_SUFFIXES = (".zip", ".jsonl", ".md", ".markdown")


def import_job_create(*, owner, upload) -> ImportJob:
    """Keep the uploaded file for the worker and queue the job (202 at the front door)."""
    name = (getattr(upload, "name", "") or "import").rsplit("/", 1)[-1][:255]
    if not name.lower().endswith(ACCEPTED_SUFFIXES):
        raise MemoryInputError(
            f"{name!r}: import a .zip (an export or Markdown notes), a .jsonl or a .md file", field="file"
        )
    if not upload.size:
        raise MemoryInputError(f"{name!r} is empty", field="file")
    limit = settings.KYBERNESIS_MAX_IMPORT_BYTES
    if upload.size > limit:
        raise MemoryTooLargeError(f"{name!r} is {upload.size:,} bytes; the limit is {limit:,}", field="file")
    path = _imports_dir() / f"{uuid.uuid4().hex}-{Path(name).suffix.lower()}"
    with open(path, "wb") as handle:
        handle.writelines(upload.chunks())
    with transaction.atomic():
        job = ImportJob.objects.create(owner=owner, filename=name, path=str(path))
        transaction.on_commit(lambda: async_task("memories.tasks.import_run", job.pk, task_name=f"import {job.pk}"))
    return job


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Run a queued import, saving progress as it goes; the file is removed at the end."""
    job = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.PENDING).select_related("owner").first()
    if job is None:
        return None
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, updated_at=timezone.now())

    def progress(report: ImportReport) -> None:
        ImportJob.objects.filter(pk=job.pk).update(
            processed=report.processed,
            created=report.created,
            duplicates=report.duplicates,
            failed=report.failed,
            total=report.total,
            errors=report.errors,
            updated_at=timezone.now(),
        )

    path = Path(job.path)
    try:
        report = import_path(owner=job.owner, path=path, name=job.filename, progress=progress)
    except Exception as exc:
        logger.exception("import job %s failed", job.pk)
        report = ImportReport(error=f"the import stopped: {exc}")
    finally:
        path.unlink(missing_ok=True)
    progress(report)
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportJob.Status.FAILED if report.error and not report.created else ImportJob.Status.DONE,
        error=report.error,
        finished_at=timezone.now(),
        path="",
        updated_at=timezone.now(),
    )
    job.refresh_from_db()
    return job
