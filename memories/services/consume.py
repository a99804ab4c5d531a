"""One file of the watched folder, in the database: claimed, read and uploaded with the upload
service's parsers, limits and duplicate rule, then filed into done/ or failed/ with its reason.

Exactly once: the file is claimed by a rename into processing/<claim>/ (memories.consume.folder), and
its ConsumedFile row, unique by claim, records each step. The upload and the row's outcome commit in
one transaction, so a watcher killed at any point either left the row "claimed" (nothing stored: the
file is read again) or recorded what the file became (it is only filed). A file queued for the task
worker (OCR, a large text) waits in processing/ until its upload job ends.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.actors import Actor, acting
from core.formatting import megabytes
from core.retry import run_with_retry
from memories.consume import folder
from memories.consume.folder import Claimed, Inbox
from memories.models import ConsumedFile, UploadJob
from memories.services.uploads import UploadResult, upload_files

logger = logging.getLogger(__name__)

ACTOR = Actor.importer("watched folder")
# Attempts of a file that hit an error on the server (the database away, a bug) before it is failed.
MAX_ATTEMPTS = 3
_DONE = (ConsumedFile.Status.CREATED, ConsumedFile.Status.DUPLICATE)
_TERMINAL = (*_DONE, ConsumedFile.Status.FAILED)
_ACTIVE_JOB = (UploadJob.Status.PENDING, UploadJob.Status.PROCESSING)


@dataclass
class _Dropped:
    """A dropped file as the upload service reads an uploaded one: a name, a size and read()."""

    name: str
    size: int
    data: bytes

    def read(self, limit: int = -1) -> bytes:
        return self.data if limit < 0 else self.data[:limit]


def consumed_file_register(*, inbox: Inbox, claimed: Claimed) -> ConsumedFile:
    """The row of a claimed file: made right after the rename, or found again after a restart (and
    made then, for a watcher that stopped between the rename and this)."""
    size = claimed.signature[0] if claimed.signature else 0
    row, _ = ConsumedFile.objects.get_or_create(
        claim=claimed.claim,
        defaults={"owner": inbox.owner, "root": str(inbox.root), "name": claimed.name[:1000], "size": size},
    )
    return row


def consumed_file_run(*, inbox: Inbox, claimed: Claimed) -> ConsumedFile:
    """Take a claimed file one step as far as it can go now: read and upload it, look at its upload job,
    file it. A file still being written, or waiting for its job, is left claimed: the caller comes back."""
    row = consumed_file_register(inbox=inbox, claimed=claimed)
    if row.filed:
        folder.remove_claim_dir(inbox, claimed.claim)
        return row
    if row.status == ConsumedFile.Status.CLAIMED:
        row = _read_and_upload(inbox, claimed, row)
    if row.status == ConsumedFile.Status.QUEUED:
        row = _follow_job(row)
    if row.status in _TERMINAL:
        row = _file(inbox, claimed, row)
    return row


def consumed_files_settle(*, inbox: Inbox) -> list[ConsumedFile]:
    """Record as filed the rows whose file a stopped watcher had already moved to its destination, but
    not yet marked: its claim folder is gone from processing/ and the file stands at the destination
    the row chose."""
    settled = []
    stale = ConsumedFile.objects.filter(root=str(inbox.root), filed=False, status__in=_TERMINAL).exclude(destination="")
    for row in stale:
        if os.path.lexists(inbox.processing / row.claim) or not os.path.lexists(inbox.root / row.destination):
            continue
        row.filed = True
        row.save(update_fields=["filed", "updated_at"])
        logger.info("watched folder: %s was filed before a stop; recorded now", row.name)
        settled.append(row)
    return settled


def _read_and_upload(inbox: Inbox, claimed: Claimed, row: ConsumedFile) -> ConsumedFile:
    if inbox.owner is None:
        return _fail(row, inbox.label)
    read = folder.read_claimed(
        claimed,
        max_bytes=settings.KYBERNESIS_MAX_UPLOAD_BYTES,
        inside=folder.points_inside(inbox, claimed.path),
    )
    if read.wait:
        return row  # still being written: read again once it has held still
    if read.vanished or read.refused:
        return _fail(row, read.vanished or read.refused)
    dropped = _Dropped(name=claimed.name.rsplit("/", 1)[-1], size=read.size, data=read.data or b"")
    try:
        with acting(ACTOR):
            return run_with_retry(lambda: _upload(row, inbox, dropped), label="consume")
    except Exception as exc:  # one file's server error must not stop the folder
        logger.exception("watched folder: %s could not be uploaded", claimed.name)
        attempts = row.attempts + 1
        ConsumedFile.objects.filter(pk=row.pk).update(attempts=attempts, updated_at=timezone.now())
        row.attempts = attempts
        if attempts >= MAX_ATTEMPTS:
            return _fail(row, f"the file could not be stored: an error on the server ({type(exc).__name__}, logged)")
        return row


def _upload(row: ConsumedFile, inbox: Inbox, dropped: _Dropped) -> ConsumedFile:
    with transaction.atomic():
        locked = ConsumedFile.objects.select_for_update().get(pk=row.pk)
        if locked.status != ConsumedFile.Status.CLAIMED:
            return locked  # another run got here first
        result = upload_files(owner=inbox.owner, files=[dropped])[0]
        _record(locked, result)
        locked.size = dropped.size
        locked.sha256 = hashlib.sha256(dropped.data).hexdigest() if dropped.data else ""
        locked.save()
    return locked


def _record(row: ConsumedFile, result: UploadResult) -> None:
    if result.status == "created":
        row.status, row.memory = ConsumedFile.Status.CREATED, result.memory
    elif result.status == "duplicate" and result.memory is not None:
        row.status, row.memory = ConsumedFile.Status.DUPLICATE, result.memory
    elif result.status in ("queued", "duplicate") and result.job is not None:
        # Queued for the worker; or the same scan as one it is reading now: follow that job.
        row.status, row.job, row.job_is_duplicate = ConsumedFile.Status.QUEUED, result.job, result.status != "queued"
    else:
        row.status, row.reason = ConsumedFile.Status.FAILED, result.error or "the upload was refused"


def _follow_job(row: ConsumedFile) -> ConsumedFile:
    job = UploadJob.objects.filter(pk=row.job_id).select_related("memory").first() if row.job_id else None
    if job is None:
        return _fail(row, "its upload job was removed before it finished: drop the file again")
    if job.status in _ACTIVE_JOB:
        return row
    if job.status == UploadJob.Status.DONE and job.memory is not None:
        # A job whose content was stored before the job existed found a duplicate.
        duplicate = row.job_is_duplicate or job.memory.created_at < job.created_at
        row.status = ConsumedFile.Status.DUPLICATE if duplicate else ConsumedFile.Status.CREATED
        row.memory = job.memory
        row.save(update_fields=["status", "memory", "updated_at"])
        return row
    if job.status == UploadJob.Status.CANCELLED:
        return _fail(row, "cancelled on the upload page: nothing was stored")
    return _fail(row, job.error or f"its upload job ended as {job.status}")


def _fail(row: ConsumedFile, reason: str) -> ConsumedFile:
    row.status, row.reason = ConsumedFile.Status.FAILED, reason
    row.save(update_fields=["status", "reason", "updated_at"])
    return row


def _file(inbox: Inbox, claimed: Claimed, row: ConsumedFile) -> ConsumedFile:
    kind = folder.DONE if row.status in _DONE else folder.FAILED
    if not row.destination:
        row.destination = folder.destination(inbox, kind, row.name)
        row.save(update_fields=["destination", "updated_at"])
    filed = folder.file_away(inbox, claimed, row.destination, reason_text(row, inbox))
    row.filed = True
    row.save(update_fields=["filed", "updated_at"])
    logger.info("watched folder: %s → %s (%s)", row.name, filed.destination, row.status)
    return row


def reason_text(row: ConsumedFile, inbox: Inbox) -> str:
    """The <name>.reason.txt beside a filed file: what it became, or why it failed, as `key: value`
    lines a person reads and a script parses."""
    memory = row.memory
    if row.status == ConsumedFile.Status.CREATED and memory is not None:
        count = getattr(memory, "chunk_count", None)
        count = memory.chunks.count() if count is None else count
        chunks = f"{count} chunk{'' if count == 1 else 's'}"
        lines = [f"created: memory {memory.pk} “{memory.title}” ({chunks})", f"link: /memories/{memory.pk}/"]
    elif row.status == ConsumedFile.Status.DUPLICATE and memory is not None:
        lines = [
            f"duplicate: already stored as memory {memory.pk} “{memory.title}”; nothing was stored twice",
            f"link: /memories/{memory.pk}/",
        ]
    elif row.status in _DONE:
        lines = [f"{row.status}: stored, but the memory has been deleted since"]
    else:
        lines = [f"failed: {row.reason or 'the file was refused'}"]
    size = f"{row.size:,} bytes" if row.size < 1024 * 1024 else megabytes(row.size)
    lines.append(f"file: {row.name} ({size}{', sha256 ' + row.sha256 if row.sha256 else ''})")
    lines.append(f"account: {inbox.label}")
    lines.append(f"dropped: {timezone.localtime(row.created_at):%Y-%m-%d %H:%M:%S %Z}")
    return "\n".join(lines) + "\n"
