"""Import: every item of a source (portability.sources) stored one transaction per memory, with its
chunks, tier history and original; idempotent by content hash, embedding batched across memories, and
a report at the end that names each item that failed and why."""

from __future__ import annotations

import logging
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from memories import embedding, original_files
from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import ChatSession, Memory, MemoryChunk, TierMove
from memories.original_files import OriginalError
from memories.search import lexical
from memories.services.locking import content_locks
from memories.services.memory import chunk_rows
from memories.services.originals import original_keep_stream
from memories.signals import content_changed_on_commit
from portability.services.records import Prepared, RecordError, record_prepare, session_prepare
from portability.services.vectors import VectorReuse, embedding_model_id
from portability.sources import ImportSourceError, Item, Source, open_source

logger = logging.getLogger(__name__)

IMPORT_BATCH = 64
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


def _save(prepared: Prepared, *, copy: int, sessions: dict[int, int], open_original=None) -> Memory:
    """One memory with its chunks, lexical postings, tier history and original, in one transaction:
    an original that is over the limit or does not match its sha256 leaves nothing of the memory.

    `copy` says which record of this content it is in the import (1 for the first). It is stored only
    while the account holds fewer memories with this content than that, counted under the content's
    lock: a second import of the same file running at the same time (a double-clicked Import) then
    finds what the first stored instead of storing it again."""
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
        content_locks(owner_id=memory.owner_id, keys=[memory.content_hash])
        if Memory.objects.filter(owner_id=memory.owner_id, content_hash=memory.content_hash).count() >= copy:
            raise _AlreadyThere
        memory.save(force_insert=True)
        # auto_now and auto_now_add overwrite on insert; the record's own times are put back.
        Memory.objects.filter(pk=memory.pk).update(**times)
        memory.created_at, memory.updated_at = times["created_at"], times["updated_at"]
        MemoryChunk.objects.bulk_create(chunk_rows(memory, prepared.chunks, prepared.vectors), batch_size=500)
        for move in prepared.moves:
            move.memory = memory
        TierMove.objects.bulk_create(prepared.moves)
        lexical.index_memories(owner_id=memory.owner_id, memory_ids=[memory.pk])
        if prepared.original is not None and open_original is not None and original_files.keeping():
            _restore_original(memory, prepared.original, open_original)
    return memory


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
                # Looked for and created under a lock of its own, so two imports at once make one.
                content_locks(owner_id=owner.pk, keys=[f"chat session {row['created_at'].isoformat()} {row['title']}"])
                session = ChatSession.objects.filter(
                    owner=owner, title=row["title"], created_at=row["created_at"]
                ).first()
                if session is None:  # auto_now_add overwrites on insert: the times go in after
                    session = ChatSession.objects.create(owner=owner, title=row["title"])
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


class _Duplicates:
    """Idempotence by content hash: the k-th record with a given hash is a duplicate when the account
    already held at least k memories with it before this import began. This look, before anything is
    embedded, spares the work; _save looks again under the content's lock before it stores."""

    def __init__(self, owner):
        self.owner = owner
        self.before: dict[str, int] = {}
        self.seen: Counter[str] = Counter()

    def check(self, records_hashes: list[str]) -> list[int | None]:
        """For each record, None when it is a duplicate, else which copy of its content it is (1, 2, ...)."""
        unknown = [h for h in set(records_hashes) if h not in self.before]
        if unknown:
            counts = Counter(
                Memory.objects.filter(owner=self.owner, content_hash__in=unknown).values_list("content_hash", flat=True)
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
    report = ImportReport(total=source.total)
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
    keys = _Keys(owner, source.key_path) if source.key_path else None
    if keys is not None:
        source.is_known = keys.complete
    extra = {"open_original": source.open_original}
    batch: list[Item] = []
    try:
        for item in source.items:
            batch.append(item)
            if len(batch) >= batch_size:
                _import_batch(
                    owner, batch, report, reuse=reuse, sessions=sessions, duplicates=duplicates, keys=keys, **extra
                )
                batch = []
                if progress:
                    progress(report)
        if batch:
            _import_batch(
                owner, batch, report, reuse=reuse, sessions=sessions, duplicates=duplicates, keys=keys, **extra
            )
    except ImportSourceError as exc:  # the archive broke mid-way (an entry that inflates past its size)
        report.error = str(exc)
    if progress:
        progress(report)
    return report


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
            prepared.append(record_prepare(item.record, label=item.label, owner=owner, vectors=reuse, now=now))
        except RecordError as exc:
            report.fail(item.label, str(exc))
        except Exception as exc:  # a record no check foresaw is still one item, not the end of the import
            logger.exception("import of %s failed", item.label)
            report.fail(item.label, f"could not be read: {exc}")
    return prepared


def _import_batch(
    owner,
    batch: list[Item],
    report: ImportReport,
    *,
    reuse: VectorReuse,
    sessions: dict,
    duplicates: _Duplicates,
    open_original=None,
    keys: _Keys | None = None,
) -> None:
    skipped = [item for item in batch if item.known]
    if skipped:
        report.processed += sum(1 for item in skipped if not item.attached)
        report.duplicates += len(skipped)
        batch = [item for item in batch if not item.known]
    if keys is not None:
        kept, known = keys.split(batch)
        report.processed += sum(1 for item in batch if not item.attached) - sum(1 for item in kept if not item.attached)
        report.duplicates += known
        batch = kept
    prepared = _prepare_batch(owner, batch, report, reuse=reuse)
    fresh, copies = [], {}
    for p, copy in zip(prepared, duplicates.check([p.memory.content_hash for p in prepared]), strict=True):
        if copy is None:
            report.duplicates += 1
        else:
            fresh.append(p)
            copies[id(p)] = copy
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
            created.append(_save(p, copy=copies[id(p)], sessions=sessions, open_original=open_original).pk)
            report.created += 1
        except _AlreadyThere:
            report.duplicates += 1
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
