"""Import jobs, for the API and the page: the uploaded file kept for the worker, the job queued (202 at
the front door), then run with its progress saved as it goes."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.tasks import async_task

from memories.models import ImportJob
from memories.parsers.mail import looks_like_mail
from memories.services.validation import MemoryInputError, MemoryTooLargeError
from portability.services.import_ import ImportReport, import_path
from portability.sources.mail import looks_like_mbox

logger = logging.getLogger(__name__)


def _imports_dir() -> Path:
    path = Path(settings.DATA_DIR) / "imports"
    path.mkdir(parents=True, exist_ok=True)
    return path


ACCEPTED_SUFFIXES = (".zip", ".jsonl", ".md", ".markdown", ".mbox", ".mbx", ".eml")


def import_job_create(*, owner, upload) -> ImportJob:
    """Keep the uploaded file for the worker and queue the job (202 at the front door)."""
    name = (getattr(upload, "name", "") or "import").rsplit("/", 1)[-1][:255]
    suffix = Path(name).suffix.lower()
    if not name.lower().endswith(ACCEPTED_SUFFIXES) and _is_mail(upload):
        suffix = ".mbox"  # a Thunderbird folder ("Inbox", "Sent") has no extension: its content says
    elif not name.lower().endswith(ACCEPTED_SUFFIXES):
        raise MemoryInputError(
            f"{name!r}: import a .zip (an export or Markdown notes), a .jsonl, a .md, an .mbox or an .eml file",
            field="file",
        )
    if not upload.size:
        raise MemoryInputError(f"{name!r} is empty", field="file")
    limit = settings.KYBERNESIS_MAX_IMPORT_BYTES
    if upload.size > limit:
        raise MemoryTooLargeError(f"{name!r} is {upload.size:,} bytes; the limit is {limit:,}", field="file")
    path = _imports_dir() / f"{uuid.uuid4().hex}-{suffix}"
    with open(path, "wb") as handle:
        handle.writelines(upload.chunks())
    with transaction.atomic():
        job = ImportJob.objects.create(owner=owner, filename=name, path=str(path))
        transaction.on_commit(lambda: async_task("portability.tasks.import_run", job.pk, task_name=f"import {job.pk}"))
    return job


def _is_mail(upload) -> bool:
    """Whether the upload begins like an mbox or a mail, read from its first chunk only."""
    try:
        head = next(iter(upload.chunks(65536)), b"")
        upload.seek(0)
    except (OSError, ValueError, StopIteration):
        return False
    return looks_like_mbox(head) or looks_like_mail(head)


def import_job_requeue(job_id: int) -> None:
    """Queue a stalled job again (the stalled-job sweep of memories.services.jobs calls it)."""
    async_task("portability.tasks.import_run", job_id, task_name=f"import {job_id} (recovered)")


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Run a queued import, saving progress as it goes; the file is removed at the end."""
    job = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.PENDING).select_related("owner").first()
    if job is None:
        return None
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, updated_at=timezone.now())

    last = ImportReport()

    def progress(report: ImportReport) -> None:
        nonlocal last
        last = report
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
        # What was stored before it stopped stays stored (each batch commits), and the job says so.
        report = last
        report.error = f"the import stopped: {exc}"
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
