"""Import: every item of a source (portability.sources) stored one transaction per memory, with its
chunks, tier history and original; idempotent by content hash, or by the id an item has at its source
(a ChatGPT message's) when it has one; embedding batched across memories, chat messages joined to
their sessions, and a report at the end that names each item that failed and why."""

from __future__ import annotations

import logging
import zipfile
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from core.actors import Actor, acting
from memories import embedding, embedding_batcher, original_files
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import TRASH_LAYER, ActivityKind, ChatSession, Memory, TierMove
from memories.original_files import OriginalError
from memories.search import lexical
from memories.services.activity import activities_record, activity_record
from memories.services.chunk_copy import chunks_insert
from memories.services.history import recording
from memories.services.locking import content_locks
from memories.services.memory import chunk_rows
from memories.services.originals import original_keep_stream
from memories.services.trash import memories_restore_for_content
from memories.signals import content_changed_on_commit
from portability.services.records import Prepared, RecordError, record_prepare, session_prepare
from portability.services.vectors import VectorReuse, embedding_model_id
from portability.sources import ImportSourceError, Item, SessionRef, Source, open_source

logger = logging.getLogger(__name__)

# Records read, checked and embedded together. Larger batches embed and store faster (a 2,000-message
# ChatGPT export: 64 a batch 139/s, 128 152/s, 256 161/s in one run) and cost memory: a 10,000-message
# mbox grows the peak RSS by 175 MB at 256 a batch, 30 MB at 64 (the target is 200). The characters
# bound keeps the two batches in flight (one embedding while the other is stored) to a few MB of text
# when the records are long mails or documents.
IMPORT_BATCH = 256
IMPORT_BATCH_CHARS = 1_000_000
MAX_REPORTED_ERRORS = 1000


@dataclass
class ImportReport:
    processed: int = 0
    created: int = 0
    duplicates: int = 0
    failed: int = 0
    errors: list[dict] = field(default_factory=list)
    error: str = ""  # the whole source could not be read
    total: int | None = None
    kind: str = ""  # what was read (portability.sources' registry)
    notices: list[str] = field(default_factory=list)  # what the reader left out on purpose

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
            "kind": self.kind,
            "notices": self.notices,
        }


def _save(
    prepared: Prepared, *, copy: int, sessions: dict[int, int], chats: _ChatSessions, open_original=None
) -> Memory:
    """One memory with its chunks, lexical postings, tier history and original, in one transaction:
    an original that is over the limit or does not match its sha256 leaves nothing of the memory.

    `copy` says which record of this content it is in the import (1 for the first). It is stored only
    while the account holds fewer memories with this content than that, counted under the content's
    lock: a second import of the same file running at the same time (a double-clicked Import) then
    finds what the first stored instead of storing it again. A record with an import key is stored
    once per key instead, whatever its content; the key's unique constraint settles a race."""
    memory = prepared.memory
    if prepared.session is not None:
        memory.metadata = {
            **memory.metadata,
            "sessionId": chats.session_id(prepared.session),
            "userId": memory.owner_id,
        }
    elif prepared.session_ref is not None:
        if prepared.session_ref in sessions:
            memory.metadata = {
                **memory.metadata,
                "sessionId": sessions[prepared.session_ref],
                "userId": memory.owner_id,
            }
        else:  # a chat message whose session did not come along: it must not claim one of this account's
            memory.metadata = {k: v for k, v in memory.metadata.items() if k not in ("sessionId", "userId")}
    times = {"created_at": memory.created_at, "updated_at": memory.updated_at}
    memory.import_key = prepared.import_key
    try:
        with recording(), transaction.atomic():
            _insert(memory, prepared, copy=copy, times=times, open_original=open_original)
    except IntegrityError:
        if (
            prepared.import_key
            and Memory.all_objects.filter(owner_id=memory.owner_id, import_key=prepared.import_key).exists()
        ):
            raise _AlreadyThere from None
        raise
    return memory


def _insert(memory: Memory, prepared: Prepared, *, copy: int, times: dict, open_original) -> None:
    if prepared.import_key:
        content_locks(owner_id=memory.owner_id, keys=[f"import {prepared.import_key}"])
        if Memory.all_objects.filter(owner_id=memory.owner_id, import_key=prepared.import_key).exists():
            raise _AlreadyThere
    else:
        content_locks(owner_id=memory.owner_id, keys=[memory.content_hash])
        if Memory.all_objects.filter(owner_id=memory.owner_id, content_hash=memory.content_hash).count() >= copy:
            raise _AlreadyThere
    memory.save(force_insert=True)
    activity_record(memory=memory, kind=ActivityKind.IMPORTED, detail={"createdAt": times["created_at"].isoformat()})
    # auto_now and auto_now_add overwrite on insert; the record's own times are put back.
    Memory.all_objects.filter(pk=memory.pk).update(**times)
    memory.created_at, memory.updated_at = times["created_at"], times["updated_at"]
    rows = chunk_rows(memory, prepared.chunks, prepared.vectors)
    if memory.trashed_at is not None:  # out of search and the lexical index, as when it was trashed
        for row in rows:
            row.tier = TRASH_LAYER
    chunks_insert(rows)
    for move in prepared.moves:
        move.memory = memory
    TierMove.objects.bulk_create(prepared.moves)
    if memory.trashed_at is None:
        lexical.index_memories(owner_id=memory.owner_id, memory_ids=[memory.pk])
    if prepared.original is not None and open_original is not None and original_files.keeping():
        _restore_original(memory, prepared.original, open_original)


def _save_together(prepared: list[Prepared], *, chats: _ChatSessions) -> list[Memory] | None:
    """Keyed memories (chat messages of an assistant's export) stored in one transaction with their
    chunks, tier history and lexical postings: a tenth of the round trips of one transaction each.
    None, with nothing stored, when any of them cannot be: the caller then stores each alone."""
    memories = []
    for p in prepared:
        memory = p.memory
        if p.session is not None:
            memory.metadata = {**memory.metadata, "sessionId": chats.session_id(p.session), "userId": memory.owner_id}
        memory.import_key = p.import_key
        memory.sync_derived_fields()
        memories.append(memory)
    times = [(m.created_at, m.updated_at) for m in memories]
    try:
        with recording(), transaction.atomic():
            Memory.objects.bulk_create(memories)
            activities_record(
                memories=memories,
                kind=ActivityKind.IMPORTED,
                details=[{"createdAt": created_at.isoformat()} for created_at, _ in times],
            )
            # auto_now and auto_now_add overwrite on insert; the records' own times are put back.
            for memory, (created_at, updated_at) in zip(memories, times, strict=True):
                memory.created_at, memory.updated_at = created_at, updated_at
            _put_times_back(memories)
            rows = [row for m, p in zip(memories, prepared, strict=True) for row in chunk_rows(m, p.chunks, p.vectors)]
            chunks_insert(rows)
            moves = []
            for memory, p in zip(memories, prepared, strict=True):
                for move in p.moves:
                    move.memory = memory
                    moves.append(move)
            TierMove.objects.bulk_create(moves)
            lexical.index_memories(owner_id=memories[0].owner_id, memory_ids=[m.pk for m in memories])
    except (IntegrityError, DataError):
        for memory in memories:
            memory.pk = None
            memory._state.adding = True
        return None
    for p, memory in zip(prepared, memories, strict=True):
        if p.session is not None:
            chats.count(memory.metadata["sessionId"])
    return memories


def _put_times_back(memories: list[Memory]) -> None:
    """The memories' own created and updated times, in one statement (bulk_update's CASE per row costs
    more to build than the insert it follows)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Memory._meta.db_table} AS m SET created_at = t.created_at, updated_at = t.updated_at"
            " FROM unnest(%s::bigint[], %s::timestamptz[], %s::timestamptz[]) AS t(id, created_at, updated_at)"
            " WHERE m.id = t.id",
            [[m.pk for m in memories], [m.created_at for m in memories], [m.updated_at for m in memories]],
        )


def _restore_original(memory: Memory, spec: dict, open_original) -> None:
    try:
        with open_original(spec["path"], original_files.max_bytes()) as stream:
            original_keep_stream(
                memory=memory,
                name=spec["name"],
                media_type=spec["mediaType"],
                chunks=iter(lambda: stream.read(original_files.COPY_CHUNK), b""),
                expected_sha256=spec["sha256"],
                page_count=spec["pageCount"],
            )
    except (ImportSourceError, OriginalError, zipfile.BadZipFile, EOFError) as exc:
        raise _OriginalRefused(str(exc)) from None


class _OriginalRefused(ValueError):
    pass


class _AlreadyThere(Exception):
    """The content came in meanwhile, by another import running at the same time."""


def _restore_sessions(owner, items: list[Item], report: ImportReport) -> dict[int, int]:
    """Chat sessions by their exported id -> this account's id; one already here (same title and start)
    is reused, so a second import adds none. A line that cannot be a session is one error in the report,
    and its messages come in without a session, as when it did not come along."""
    mapping = {}
    now = timezone.now()
    for item in items:
        if item.record is None:
            report.processed += 1
            report.fail(item.label, item.error)
            continue
        try:
            row = session_prepare(item.record, now=now)
            with transaction.atomic():
                # Looked for and created under a lock of its own, so two imports at once make one. A
                # session imported from an assistant's export is known by its id there.
                if row["import_key"]:
                    content_locks(owner_id=owner.pk, keys=[f"chat session {row['import_key']}"])
                    found = ChatSession.objects.filter(owner=owner, import_key=row["import_key"])
                else:
                    content_locks(
                        owner_id=owner.pk, keys=[f"chat session {row['created_at'].isoformat()} {row['title']}"]
                    )
                    found = ChatSession.objects.filter(owner=owner, title=row["title"], created_at=row["created_at"])
                session = found.first()
                if session is None:  # auto_now_add overwrites on insert: the times go in after
                    session = ChatSession.objects.create(owner=owner, title=row["title"], import_key=row["import_key"])
                    ChatSession.objects.filter(pk=session.pk).update(
                        created_at=row["created_at"], updated_at=row["updated_at"], message_count=row["message_count"]
                    )
        except RecordError as exc:
            report.processed += 1
            report.fail(item.label, str(exc))
            continue
        except Exception as exc:  # one session's failure must not stop the import
            logger.exception("import of %s failed", item.label)
            report.processed += 1
            report.fail(item.label, f"could not be stored: {exc}")
            continue
        mapping[row["ref"]] = session.pk
    return mapping


class _ChatSessions:
    """The sessions an assistant's conversations become, by the conversation's id at its source: found
    (an earlier import of the same conversation: its title and times follow the newer export) or made
    once, under a lock, so a second import, or two at once, make no second session. Message counts
    grow by the messages each batch stores."""

    def __init__(self, owner):
        self.owner = owner
        self.ids: dict[str, int] = {}
        self.added: Counter[int] = Counter()

    def session_id(self, ref: SessionRef) -> int:
        if ref.key in self.ids:
            return self.ids[ref.key]
        with transaction.atomic():
            content_locks(owner_id=self.owner.pk, keys=[f"chat session {ref.key}"])
            session = ChatSession.objects.filter(owner=self.owner, import_key=ref.key).first()
            if session is None:
                session = ChatSession.objects.create(owner=self.owner, title=ref.title, import_key=ref.key)
                ChatSession.objects.filter(pk=session.pk).update(created_at=ref.created_at, updated_at=ref.updated_at)
            elif ref.updated_at > session.updated_at or ref.title != session.title:
                ChatSession.objects.filter(pk=session.pk).update(
                    title=ref.title, updated_at=max(ref.updated_at, session.updated_at)
                )
        self.ids[ref.key] = session.pk
        return session.pk

    def count(self, session_id: int) -> None:
        self.added[session_id] += 1

    def flush(self) -> None:
        for session_id, n in self.added.items():
            ChatSession.objects.filter(pk=session_id).update(message_count=F("message_count") + n)
        self.added.clear()


class _Duplicates:
    """Idempotence by content hash: the k-th record with a given hash is a duplicate when the account
    already held at least k memories with it before this import began. This look, before anything is
    embedded, spares the work; _save looks again under the content's lock before it stores. A record
    with an import key is a duplicate when the account holds that key, or the import met it before."""

    def __init__(self, owner):
        self.owner = owner
        self.before: dict[str, int] = {}
        self.seen: Counter[str] = Counter()
        self.keys_seen: set[str] = set()

    def check_keys(self, keys: list[str]) -> list[bool]:
        """For each import key, whether it is new (neither held nor met earlier in this import)."""
        held = set(
            Memory.all_objects.filter(owner=self.owner, import_key__in=set(keys)).values_list("import_key", flat=True)
        )
        out = []
        for key in keys:
            out.append(key not in held and key not in self.keys_seen)
            self.keys_seen.add(key)
        return out

    def check(self, records_hashes: list[str]) -> list[int | None]:
        """For each record, None when it is a duplicate, else which copy of its content it is (1, 2, ...)."""
        unknown = [h for h in set(records_hashes) if h not in self.before]
        if unknown:
            # The trash counts: content there is not imported twice (a record of it restores it, below).
            counts = Counter(
                Memory.all_objects.filter(owner=self.owner, content_hash__in=unknown).values_list(
                    "content_hash", flat=True
                )
            )
            self.before.update({h: counts.get(h, 0) for h in unknown})
        out = []
        for h in records_hashes:
            self.seen[h] += 1
            out.append(None if self.seen[h] <= self.before[h] else self.seen[h])
        return out


class _Keys:
    """Idempotence by a source's own identity (a mail's Message-ID, see Source.key_path): a record whose
    key the account already holds, or that an earlier record of this import had, is a duplicate. It is
    looked for before anything is embedded, so a re-import, or one resumed after a crash, only reads."""

    def __init__(self, owner, path: tuple[str, ...]):
        self.owner = owner
        self.lookup = "metadata__" + "__".join(path)
        self.path = path
        self.seen: set[str] = set()
        self._complete: set[str] | None = None

    def key(self, record: dict | None) -> str | None:
        value = record.get("metadata") if isinstance(record, dict) else None
        for name in self.path:
            value = value.get(name) if isinstance(value, dict) else None
        return value if isinstance(value, str) and value else None

    def complete(self, key: str) -> bool:
        """Whether the account holds the record with this key and each attachment it lists, read once
        for all the owner's keyed memories; a source asks before it reads a record (Source.is_known)."""
        if self._complete is None:
            rows = list(
                Memory.objects.filter(owner=self.owner, **{f"{self.lookup}__isnull": False}).values_list(
                    self.lookup, "metadata__mail__attachments"
                )
            )
            held = {k for k, _ in rows if isinstance(k, str)}
            self._complete = {
                k
                for k, attached in rows
                if isinstance(k, str)
                and all(
                    f"sha256:{a.get('sha256')}" in held
                    for a in (attached if isinstance(attached, list) else [])
                    if isinstance(a, dict)
                )
            }
        return key in self._complete

    def split(self, batch: list[Item]) -> tuple[list[Item], int]:
        """The batch without its duplicates, and how many there were."""
        keys = [self.key(item.record) for item in batch]
        wanted = {k for k in keys if k is not None and k not in self.seen}
        held = set()
        if wanted:
            held = set(
                Memory.objects.filter(owner=self.owner, **{f"{self.lookup}__in": list(wanted)}).values_list(
                    self.lookup, flat=True
                )
            )
        kept, duplicates = [], 0
        for item, key in zip(batch, keys, strict=True):
            if key is not None and (key in self.seen or key in held):
                duplicates += 1
                continue
            if key is not None:
                self.seen.add(key)
            kept.append(item)
        return kept, duplicates


def import_source(
    *, owner, source: Source, progress: Callable[[ImportReport], None] | None = None, batch_size: int = IMPORT_BATCH
) -> ImportReport:
    """Import every item of a source. Each memory is stored in its own transaction, so a bad item is
    reported and skipped while the rest go in; embedding is batched across memories for speed."""
    report = ImportReport(total=source.total, kind=source.kind)
    for item in source.errors:
        report.processed += 1
        report.fail(item.label, item.error)
    manifest = source.manifest
    included = bool(manifest.get("includesVectors")) and manifest.get("embeddingDimensions") == EMBEDDING_DIMENSIONS
    reuse = VectorReuse(
        included=included, model_matches=included and manifest.get("embeddingModel") == embedding_model_id()
    )
    sessions = _restore_sessions(owner, source.chat_sessions, report) if source.chat_sessions else {}
    duplicates = _Duplicates(owner)
    chats = _ChatSessions(owner)
    keys = _Keys(owner, source.key_path) if source.key_path else None
    if keys is not None:
        source.is_known = keys.complete

    def stage(batch: list[Item]) -> _Staged:
        return _stage_batch(owner, batch, reuse=reuse, duplicates=duplicates, keys=keys)

    def store(staged: _Staged | None) -> None:
        if staged is not None:
            _store_batch(owner, staged, report, sessions=sessions, chats=chats, open_original=source.open_original)

    # Two batches in flight: while one embeds (the model runs outside the GIL), the one before it is
    # stored and the next one is read and checked.
    batch: list[Item] = []
    chars = 0
    pending: _Staged | None = None
    try:
        for item in source.items:
            batch.append(item)
            chars += _item_chars(item)
            if len(batch) >= batch_size or chars >= IMPORT_BATCH_CHARS:
                full, batch, chars = batch, [], 0
                staged = stage(full)
                store(pending)
                pending = staged
                if progress:
                    progress(report)
    except ImportSourceError as exc:  # the source broke mid-way: a zip entry past its size, JSON cut short
        report.error = str(exc)
    # What was read whole before the end (or the break) still goes in.
    last = stage(batch) if batch else None
    store(pending)
    store(last)
    report.notices = source.notices()
    if progress:
        progress(report)
    return report


def _item_chars(item: Item) -> int:
    content = item.record.get("content") if isinstance(item.record, dict) else None
    return len(content) if isinstance(content, str) else 0


def _prepare_batch(owner, batch: list[Item], report: ImportReport, *, reuse: VectorReuse) -> list[Prepared]:
    """The batch's records checked into unsaved memories; each one that cannot be is reported by name."""
    now = timezone.now()
    prepared: list[Prepared] = []
    for item in batch:
        report.processed += 0 if item.attached else 1
        if item.record is None:
            report.fail(item.label, item.error)
            continue
        try:
            one = record_prepare(item.record, label=item.label, owner=owner, vectors=reuse, now=now)
            if item.key:
                one.import_key, one.session, one.key_checked = item.key, item.session, True
            prepared.append(one)
        except RecordError as exc:
            report.fail(item.label, str(exc))
        except Exception as exc:  # a record no check foresaw is still one item, not the end of the import
            logger.exception("import of %s failed", item.label)
            report.fail(item.label, f"could not be read: {exc}")
    return prepared


@dataclass
class _Staged:
    """A batch checked, its duplicates counted, and its embedding running on another thread. Its counts
    (`part`) join the report when it is stored, so the report never counts what is not stored yet."""

    part: ImportReport
    fresh: list[Prepared]
    copies: dict[int, int]
    missing: list[tuple[Prepared, int]]
    vectors: Future | None
    # Content of records that were duplicates of memories in the trash: storing the batch restores them.
    live_duplicates: list[str] = field(default_factory=list)


def _stage_batch(
    owner, batch: list[Item], *, reuse: VectorReuse, duplicates: _Duplicates, keys: _Keys | None = None
) -> _Staged:
    report = ImportReport()
    # Items the source already knows the account holds (a resumed mail import), and records whose own
    # identity (a Message-ID, Source.key_path) the account holds, are duplicates before they are checked.
    skipped = [item for item in batch if item.known]
    if skipped:
        report.processed += sum(1 for item in skipped if not item.attached)
        report.duplicates += len(skipped)
        batch = [item for item in batch if not item.known]
    if keys is not None:
        kept, held = keys.split(batch)
        report.processed += sum(1 for item in batch if not item.attached) - sum(1 for item in kept if not item.attached)
        report.duplicates += held
        batch = kept
    # An item the source names by an id the account already holds is a duplicate before it is even
    # checked: a second import of a large export costs one query a batch.
    keyed = [item for item in batch if item.key and item.record is not None]
    new = dict(zip(map(id, keyed), duplicates.check_keys([item.key for item in keyed]), strict=True))
    known = [item for item in keyed if not new[id(item)]]
    report.processed += len(known)
    report.duplicates += len(known)
    prepared = _prepare_batch(owner, [item for item in batch if new.get(id(item), True)], report, reuse=reuse)
    fresh, copies = [], {}
    live_duplicates = []
    unchecked = [p for p in prepared if p.import_key and not p.key_checked]  # keys kept in a Kybernesis export
    new.update(zip(map(id, unchecked), duplicates.check_keys([p.import_key for p in unchecked]), strict=True))
    plain = [p for p in prepared if not p.import_key]
    by_hash = dict(zip(map(id, plain), duplicates.check([p.memory.content_hash for p in plain]), strict=True))
    for p in prepared:
        if p.import_key:
            copy = 1 if p.key_checked or new[id(p)] else None
        else:
            copy = by_hash[id(p)]
        if copy is None:
            report.duplicates += 1
            if p.memory.trashed_at is None and not p.import_key:
                live_duplicates.append(p.memory.content_hash)
        else:
            fresh.append(p)
            copies[id(p)] = copy
    missing = [(p, i) for p in fresh for i, v in enumerate(p.vectors) if v is None]
    texts = [embedding.chunk_embedding_text(p.memory.title, p.chunks[i].text) for p, i in missing]
    vectors = embedding_batcher.embed_texts_async(texts) if texts else None
    return _Staged(report, fresh, copies, missing, vectors, live_duplicates)


def _store_batch(
    owner,
    staged: _Staged,
    report: ImportReport,
    *,
    sessions: dict,
    chats: _ChatSessions,
    open_original=None,
) -> None:
    report.processed += staged.part.processed
    report.duplicates += staged.part.duplicates
    for error in staged.part.errors:
        report.fail(error["item"], error["error"])
    if staged.vectors is not None:
        for (p, i), vector in zip(staged.missing, staged.vectors.result(), strict=True):
            p.vectors[i] = vector
    fresh, copies = staged.fresh, staged.copies
    created = []
    # Messages known by their source's ids go in together, in one transaction; if any of them cannot
    # (a race on a key, a value the database refuses), each is stored alone below, as everything else.
    together = [p for p in fresh if p.import_key and p.original is None and p.memory.trashed_at is None]
    if len(together) > 1 and (stored := _save_together(together, chats=chats)) is not None:
        created += [m.pk for m in stored]
        report.created += len(stored)
        fresh = [p for p in fresh if p not in together]
    for p in fresh:
        try:
            memory = _save(p, copy=copies[id(p)], sessions=sessions, chats=chats, open_original=open_original)
            created.append(memory.pk)
            report.created += 1
            if p.session is not None:
                chats.count(memory.metadata["sessionId"])
        except _AlreadyThere:
            report.duplicates += 1
        except _OriginalRefused as exc:
            report.fail(p.label, f"not imported: {exc}")
        except Exception as exc:  # one memory's failure must not stop the rest; it is reported by name
            logger.exception("import of %s failed", p.label)
            report.fail(p.label, f"could not be stored: {exc}")
    chats.flush()
    _restore_trashed(owner, staged.live_duplicates)
    _extract_later(created)


def _restore_trashed(owner, digests: list[str]) -> None:
    """A record whose content is in the account's trash brings that memory back, as adding it would."""
    if digests:
        with transaction.atomic():
            content_locks(owner_id=owner.pk, keys=digests)
            memories_restore_for_content(owner_id=owner.pk, digests=digests)


def _extract_later(created: list[int]) -> None:
    """Graph extraction and links (wikilinks included) follow in the worker, as for any new memory; not
    for a memory imported into the trash (its restore extracts it)."""
    outside = set(Memory.objects.filter(pk__in=created).values_list("pk", flat=True)) if created else set()
    if live := [pk for pk in created if pk in outside]:
        content_changed_on_commit(memory_ids=live)


def import_path(*, owner, path: Path, name: str = "", progress=None) -> ImportReport:
    try:
        source = open_source(Path(path), name)
    except ImportSourceError as exc:
        return ImportReport(error=str(exc))
    # The memories an import stores are the import's doing, whoever started it.
    with acting(Actor.importer(f"import of {name or Path(path).name}")):
        return import_source(owner=owner, source=source, progress=progress)
