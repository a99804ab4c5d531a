"""An export record checked and turned into an unsaved memory: the API's rules (and messages) for what a
person writes, and type checks for the stored state (tier and its history, times, accesses, auto tags,
the chunk vectors and the original's description), so that whatever reaches the database fits it. Chat
session lines are checked here too. Nothing here writes."""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import numpy as np
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.text import strip_display_controls, text_problem
from memories import tier_rules
from memories.chunking import Chunk
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import Memory, Tier, TierMove, content_hash
from memories.models import Source as MemorySource
from memories.services.memory import MemoryInput, memory_input_prepare
from memories.services.tags import autotag
from memories.services.tiers import tier_facts
from memories.services.validation import MemoryInputError
from portability.services.vectors import VectorReuse
from portability.sources.items import SessionRef

MAX_IMPORT_KEY_CHARS = 300  # Memory.import_key and ChatSession.import_key


class RecordError(ValueError):
    pass


MAX_STORED_INT = 2**31 - 1  # the counts are PostgreSQL integers


def _field(record: dict, name: str, kind, default=None, *, required: bool = False):
    """record[name] of the given JSON type, or the default; a string must be storable text, a number
    finite and a whole number fit its column, each refusal naming the field."""
    value = record.get(name, default)
    if value is None:
        if required:
            raise RecordError(f"{name} is missing")
        return default
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind in (int, float) and isinstance(value, bool)):
        raise RecordError(f"{name} must be {_KIND_NAMES.get(kind, kind.__name__)}")
    if kind is str and (problem := text_problem(value)):
        raise RecordError(f"{name}: {problem}")
    if kind is float and not math.isfinite(value):
        raise RecordError(f"{name} must be a finite number, got {value}")
    if kind is int and abs(value) > MAX_STORED_INT:
        raise RecordError(f"{name} is {value:,}; the largest that can be stored is {MAX_STORED_INT:,}")
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
    try:
        parsed = parse_datetime(value) if isinstance(value, str) else None
    except ValueError:  # the shape of a date, but no such day: 2020-13-45
        parsed = None
    if parsed is None:
        raise RecordError(f"{name} is not an ISO 8601 date and time: {value!r}")
    if timezone.is_naive(parsed):
        parsed = parsed.replace(tzinfo=UTC)
    try:
        # In UTC, as it is stored: 9999-12-31T23:00-05:00 is in year 10000, which PostgreSQL keeps
        # but no reader can load, so every list and export of the account would fail on it.
        return parsed.astimezone(UTC)
    except OverflowError:
        raise RecordError(f"{name} is outside the years 1 to 9999 in UTC: {value!r}") from None


def _unit(record: dict, name: str, default=None):
    value = _field(record, name, float, default)
    if value is not None and not 0.0 <= value <= 1.0:
        raise RecordError(f"{name} must be from 0 to 1, got {value}")
    return value


def _choice(record: dict, name: str, choices, default):
    value = _field(record, name, str, default)
    if value not in choices:
        raise RecordError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _auto_tags(record: dict) -> list[dict] | None:
    value = record.get("autoTags")
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(t, dict)
        and isinstance(t.get("tag"), str)
        and isinstance(t.get("confidence"), (int, float))
        and not isinstance(t.get("confidence"), bool)
        for t in value
    ):
        raise RecordError('autoTags must be a list of {"tag": string, "confidence": number}')
    for t in value:
        if problem := text_problem(t["tag"]):
            raise RecordError(f"autoTags: a tag {problem}")
        if not 0.0 <= t["confidence"] <= 1.0:  # NaN too
            raise RecordError(f"autoTags: the confidence of {t['tag']!r} must be from 0 to 1, got {t['confidence']}")
    return [{"tag": t["tag"], "confidence": float(t["confidence"])} for t in value]


@dataclass
class Prepared:
    label: str
    memory: Memory
    chunks: list
    vectors: list  # one per chunk: a vector, or None to embed
    moves: list[TierMove]
    restore_tier: bool  # the record carries its tier; otherwise the rules decide, as for a new memory
    session_ref: int | None
    original: dict | None = None  # the record's "original", checked: path, name, mediaType, sha256, pageCount
    # The id it has at its source (Memory.import_key): the import finds it by this, not by its content.
    import_key: str = ""
    session: SessionRef | None = None  # the conversation a chat message joins, as its source names it
    key_checked: bool = False  # the import already looked for its key among the account's


def record_prepare(record: dict, *, label: str, owner, vectors: VectorReuse, now) -> Prepared:
    """Validate a record with the same rules (and messages) as the API, and build the unsaved memory."""
    memory, chunks = _memory_from_record(record, owner=owner, now=now)
    _restore_auto_tags(memory, record, now=now)
    restore_tier = _restore_tier(memory, record, now=now)
    memory.sync_derived_fields()
    # A memory exported from the trash goes back into the trash (docs/features/trash.md).
    memory.trashed_at = _time(record, "trashedAt")
    if memory.trashed_at is not None:
        memory.trashed_by = _field(record, "trashedBy", str, "")[:200]
    # An export holds the text as it was stored; one from before the normalisation may differ from its
    # normalised form here, so the hash is checked against the text as exported.
    if (expected := record.get("contentHash")) is not None and expected not in (
        memory.content_hash,
        content_hash(record["content"]),
    ):
        raise RecordError("contentHash does not match the content (was the file edited?)")
    moves = _tier_moves(record, owner=owner, now=now)
    known = _known_vectors(record) if vectors.included else {}
    session_ref = memory.metadata.get("sessionId") if memory.source == MemorySource.CHAT else None
    return Prepared(
        label=label,
        memory=memory,
        chunks=chunks,
        vectors=[vectors.reusable(known.get(content_hash(chunk.text)), memory.title, chunk.text) for chunk in chunks],
        moves=moves,
        restore_tier=restore_tier,
        session_ref=session_ref if isinstance(session_ref, int) else None,
        original=_original_spec(record.get("original")),
        import_key=import_key_of(record),
    )


def _memory_from_record(record: dict, *, owner, now) -> tuple[Memory, list[Chunk]]:
    """The unsaved memory and its chunks: the API's own checks for the fields a person writes (the same
    code and messages as a create), then the stored state (summary, accesses, times) as exported."""
    # As the file has them, of any JSON type or missing: memory_input_prepare refuses what cannot be stored.
    content: Any = record.get("content")
    metadata: Any = record.get("metadata")
    if isinstance(metadata, dict) and "kind" in metadata and "kindChosenAt" in record and not record["kindChosenAt"]:
        # The export says a chat message's kind was the question rule's, not a person's: the rule of
        # today decides it again (a kind named with no such word is taken as chosen where it differs).
        metadata = {key: value for key, value in metadata.items() if key != "kind"}
    try:
        given = memory_input_prepare(
            MemoryInput(
                title=record.get("title"),
                content=content,
                source=record.get("source", MemorySource.UPLOAD),
                priority=record.get("priority"),
                metadata=metadata,
                manual_tags=record.get("manualTags") or [],
                notices=_notices(record),
            ),
            index=None,
        )
    except MemoryInputError as exc:
        raise RecordError(exc.named) from None
    created_at = _time(record, "createdAt", now)
    memory = Memory(
        owner=owner,
        title=given.title,
        content=given.content,
        source=given.source,
        metadata=given.metadata,
        manual_tags=given.manual_tags,
        notices=given.notices,
        title_edited_at=_time(record, "titleEditedAt"),
        # A chat message's kind a person chose stays chosen (a "note" named in the metadata is one).
        kind_chosen_at=_time(record, "kindChosenAt") or (now if given.kind_chosen else None),
        priority=given.priority,
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
        raise RecordError("accessCount must not be negative")
    return memory, given.chunks


def _notices(record: dict) -> list[str]:
    """The record's notices (how its text was read), checked for shape; the memory rules clean them."""
    value = record.get("notices")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RecordError("notices must be a list of strings")
    return value


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
        decision = tier_rules.evaluate_tier(tier_facts(memory), now=now, policy=tier_rules.TierPolicy.from_settings())
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
        raise RecordError("tierHistory must be a list")
    moves = []
    for i, move in enumerate(history):
        if not isinstance(move, dict):
            raise RecordError(f"tierHistory[{i}] must be a JSON object")
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


def _known_vectors(record: dict) -> dict[str, tuple[np.ndarray, str | None]]:
    """The exported chunk vectors, with the embedding key each was exported with, by chunk text hash."""
    known: dict[str, tuple[np.ndarray, str | None]] = {}
    for item in record.get("chunks") or []:
        try:
            vector = np.frombuffer(base64.b64decode(item["embedding"], validate=True), dtype="<f4")
        except (KeyError, TypeError, ValueError):
            raise RecordError("chunks: an embedding is not base64 float32") from None
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
        raise RecordError("original must be a JSON object")
    path = _field(value, "path", str, required=True)
    name = _field(value, "name", str, required=True)
    sha256 = _field(value, "sha256", str, required=True)
    if not _SHA256_HEX.match(sha256):
        raise RecordError("original.sha256 must be 64 lowercase hex digits")
    pages = _field(value, "pageCount", int, None)
    return {
        "path": path,
        "name": name,
        "mediaType": _field(value, "mediaType", str, ""),
        "sha256": sha256,
        "pageCount": pages if pages is not None and pages >= 0 else None,
    }


def import_key_of(record: dict) -> str:
    """The record's importKey (the id it had at its source), checked, or ""."""
    key = _field(record, "importKey", str, "")
    if len(key) > MAX_IMPORT_KEY_CHARS or key != key.strip() or any(ch in key for ch in "\r\n"):
        raise RecordError(f"importKey must be one line of at most {MAX_IMPORT_KEY_CHARS} characters")
    return key


def session_prepare(row: dict, *, now) -> dict:
    """A chat_sessions.jsonl line checked: its id (what its messages' metadata.sessionId names), title,
    message count and times, as ChatSession fields."""
    ref = _field(row, "id", int, required=True)
    count = _field(row, "messageCount", int, 0)
    if count < 0:
        raise RecordError("messageCount must not be negative")
    created = _time(row, "createdAt", now)
    return {
        "ref": ref,
        "title": strip_display_controls(_field(row, "title", str, ""))[:200],
        "message_count": count,
        "created_at": created,
        "updated_at": _time(row, "updatedAt", created),
        "import_key": import_key_of(row),
    }
