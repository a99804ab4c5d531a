"""Upload jobs queued: a scan or photo kept on disk and queued for OCR (or found to be a duplicate),
the task each kind of upload job runs, and cancelling one. The worker's side is
memories.services.ocr_uploads."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.tasks import async_task

from memories.models import Memory, UploadJob
from memories.parsers import Extracted
from memories.services.trash import memories_restore_from_trash

ACTIVE = (UploadJob.Status.PENDING, UploadJob.Status.PROCESSING)


@dataclass
class OcrUpload:
    """A file whose pages need OCR, as the request read it (its text layer, if any, and its pages)."""

    name: str
    data: bytes
    extracted: Extracted
    manual_tags: list[str]

    @property
    def sha256(self) -> str:
        return self.extracted.metadata["sha256"]


def _uploads_dir() -> Path:
    path = Path(settings.DATA_DIR) / "uploads"
    path.mkdir(parents=True, exist_ok=True)
    return path


def ocr_task_timeout() -> int:
    """Seconds the worker may take on one OCR job: OCR's own limit, then the ingest of its text."""
    total = settings.KYBERNESIS_OCR_TIME_LIMIT + settings.KYBERNESIS_OCR_PAGE_TIMEOUT
    return int(min(settings.KYBERNESIS_Q_TIMEOUT, total + settings.KYBERNESIS_UPLOAD_TASK_TIMEOUT))


def upload_job_enqueue(job_id: int, kind: str, *, recovered: bool = False) -> None:
    """Queue an upload job's task: the OCR read or the ingest of a large text."""
    suffix = " (recovered)" if recovered else ""
    if kind == UploadJob.Kind.OCR:
        async_task(
            "memories.tasks.ocr_upload", job_id, task_name=f"ocr upload {job_id}{suffix}", timeout=ocr_task_timeout()
        )
    else:
        async_task(
            "memories.tasks.ingest_upload",
            job_id,
            task_name=f"ingest upload {job_id}{suffix}",
            timeout=settings.KYBERNESIS_UPLOAD_TASK_TIMEOUT,
        )


def ocr_upload_queue(
    *, owner, upload: OcrUpload, queued: dict[str, UploadJob]
) -> tuple[str, Memory | None, UploadJob | None]:
    """Queue a file for OCR: (status, memory, job) of its upload result. The same file already stored,
    being read, or sent twice in one request is a duplicate pointing at that memory or job."""
    existing = Memory.objects.for_user(owner).filter(original__sha256=upload.sha256).order_by("pk").first()
    if existing is not None:
        return "duplicate", existing, None
    trashed = Memory.all_objects.for_user(owner).trashed().filter(original__sha256=upload.sha256).order_by("pk")
    if (in_trash := trashed.first()) is not None:
        # The same file again brings back the memory made from it (docs/features/trash.md), unread.
        restored = memories_restore_from_trash(owner_id=owner.pk, memory_ids=[in_trash.pk])
        if restored:
            return "duplicate", Memory.objects.get(pk=in_trash.pk), None
    job = queued.get(upload.sha256) or (
        UploadJob.objects.for_user(owner)
        .filter(kind=UploadJob.Kind.OCR, status__in=ACTIVE, metadata__sha256=upload.sha256)
        .order_by("pk")
        .first()
    )
    if job is not None:
        return "duplicate", None, job
    extension = Path(upload.name).suffix.lower()[:16]
    path = _uploads_dir() / f"{uuid.uuid4().hex}{extension}"
    path.write_bytes(upload.data)
    title = upload.name.rsplit(".", 1)[0] if "." in upload.name.strip(".") else upload.name
    try:
        job = UploadJob.objects.create(
            owner=owner,
            filename=upload.name,
            title=(upload.extracted.title or title)[:500],
            kind=UploadJob.Kind.OCR,
            path=str(path),
            metadata=upload.extracted.metadata,
            manual_tags=list(upload.manual_tags),
            pages_total=len(upload.extracted.ocr_pages),
        )
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    transaction.on_commit(lambda: upload_job_enqueue(job.pk, job.kind))
    queued[upload.sha256] = job
    return "queued", None, job


def upload_job_cancel(*, job: UploadJob) -> UploadJob:
    """Stop a queued or running upload job. A running OCR job stops after its current page and stores
    nothing; a job already done or failed is left as it is."""
    stopped = UploadJob.objects.filter(pk=job.pk, status__in=ACTIVE).update(
        status=UploadJob.Status.CANCELLED, error="cancelled", text="", updated_at=timezone.now()
    )
    job.refresh_from_db()
    if stopped and job.path and job.status == UploadJob.Status.CANCELLED:
        remove_file(job)
    return job


def remove_file(job: UploadJob) -> None:
    """Remove the file an OCR job waited with (its memory keeps its own copy as the original)."""
    if job.path:
        Path(job.path).unlink(missing_ok=True)
        UploadJob.objects.filter(pk=job.pk).update(path="")
        job.path = ""


def upload_job_file_remove(job_id: int) -> None:
    """Remove the file of a job that was given up (the stalled-job sweep failed it)."""
    job = UploadJob.objects.filter(pk=job_id).exclude(path="").first()
    if job is not None:
        remove_file(job)
