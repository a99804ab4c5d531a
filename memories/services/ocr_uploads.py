"""Uploads read by OCR in the task worker: a queued scan or photo read page by page (bounded in pages,
pixels and time, its progress saved after every page, stopped when cancelled), then stored as a memory
with its original file and notices saying which pages came from OCR."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.actors import acting
from memories.models import UploadJob
from memories.parsers import ExtractionError, extract
from memories.parsers.ocr import OcrCancelled
from memories.services.memory import memory_create_many
from memories.services.upload_queue import remove_file
from memories.services.uploads import upload_input, uploader
from memories.services.validation import MemoryInputError

logger = logging.getLogger(__name__)


def ocr_upload_run(*, job_id: int) -> UploadJob | None:
    """Read one queued scan by OCR and store it as a memory, acting for the person who uploaded it.
    Safe to run twice: a job no longer pending is left alone."""
    with acting(lambda: uploader(job_id)):
        return _ocr_upload_run(job_id)


def _ocr_upload_run(job_id: int) -> UploadJob | None:
    with transaction.atomic():
        job = (
            UploadJob.objects.select_for_update(skip_locked=True)
            .filter(pk=job_id, status=UploadJob.Status.PENDING, kind=UploadJob.Kind.OCR)
            .first()
        )
        if job is None:
            return None
        job.status, job.pages_done = UploadJob.Status.PROCESSING, 0
        job.save(update_fields=["status", "pages_done", "updated_at"])
    stopped = False

    def progress(done: int, total: int) -> None:
        nonlocal stopped
        # Saved after every page: the upload list shows it, and the stalled-job sweep sees the job alive.
        updated = UploadJob.objects.filter(pk=job.pk, status=UploadJob.Status.PROCESSING).update(
            pages_done=done, pages_total=total, updated_at=timezone.now()
        )
        stopped = stopped or not updated

    try:
        data = Path(job.path).read_bytes()
    except OSError:
        return _finish(job, UploadJob.Status.FAILED, "the uploaded file is no longer on the server; upload it again")
    try:
        extracted = extract(
            job.filename,
            data,
            max_inflated=settings.KYBERNESIS_MAX_INFLATED_BYTES,
            progress=progress,
            should_stop=lambda: stopped,
        )
        item = upload_input(name=job.filename, data=data, extracted=extracted, manual_tags=list(job.manual_tags))
        if _cancelled(job):
            raise OcrCancelled()
        memory = memory_create_many(owner=job.owner, items=[item], unique=True)[0]
    except OcrCancelled:
        remove_file(job)
        return job
    except (ExtractionError, MemoryInputError) as exc:
        return _finish(job, UploadJob.Status.FAILED, str(exc))
    except Exception:
        logger.exception("OCR upload job %s failed", job.pk)
        return _finish(job, UploadJob.Status.FAILED, "the file could not be read: an error on the server (logged)")
    job.memory = memory
    return _finish(job, UploadJob.Status.DONE, "")


def _cancelled(job: UploadJob) -> bool:
    return UploadJob.objects.filter(pk=job.pk, status=UploadJob.Status.CANCELLED).exists()


def _finish(job: UploadJob, status: str, error: str) -> UploadJob:
    # A job cancelled meanwhile stays cancelled, unless its memory was stored before the cancel came.
    claim = UploadJob.objects.filter(pk=job.pk).exclude(status=UploadJob.Status.CANCELLED)
    if status == UploadJob.Status.DONE:
        claim = UploadJob.objects.filter(pk=job.pk)
    claim.update(
        status=status,
        error=error,
        memory=job.memory,
        pages_done=F("pages_total") if status == UploadJob.Status.DONE else F("pages_done"),
        updated_at=timezone.now(),
    )
    remove_file(job)
    job.refresh_from_db()
    return job
