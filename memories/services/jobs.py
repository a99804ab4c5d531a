"""Upload and import jobs whose worker stopped are queued again, so none stays "processing" forever.

A queued upload or import runs in a django-q2 worker. If that worker is killed (out of memory, a
restart, a deploy) or the task outlives its timeout, the job row stays "processing"/"running", and
the task's retry finds a job that is no longer pending and leaves it alone. Every few minutes
`jobs_recover_stalled` looks for jobs that made no progress for longer than any live run could:

- a job still "pending" long after it was queued (its task was lost) is queued again;
- a job "processing"/"running" with no progress is put back to "pending" and queued again.

Re-running is safe because both paths are idempotent by content hash: a memory the first run already
stored is found as a duplicate, never created twice (an upload job links to it; a resumed import
counts it among the duplicates). Each job is recovered at most
KYBERNESIS_JOB_MAX_RECOVERIES times; after that it fails with a reason instead of looping.

The claim is one conditional UPDATE on (id, status, updated_at), so two workers sweeping at once
recover a job once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from core.schedules import schedule_ensure
from memories.models import ImportJob, UploadJob
from memories.services.upload_queue import upload_job_enqueue, upload_job_file_remove

logger = logging.getLogger(__name__)

SCHEDULE_NAME = "memories: queue again the uploads and imports whose worker stopped"

# Seconds past a task's timeout before its job counts as abandoned: django-q2's claim on a task
# outlives the timeout by 120 s (core.queue), and the sweep itself runs every few minutes.
_GRACE_SECONDS = 180


def _upload_stale_after() -> timedelta:
    # An upload writes nothing while its one memory is embedded, so only its timeout bounds it (an OCR
    # job saves its progress after every page, each bounded by KYBERNESIS_OCR_PAGE_TIMEOUT).
    return timedelta(seconds=settings.KYBERNESIS_UPLOAD_TASK_TIMEOUT + _GRACE_SECONDS)


def _import_stale_after() -> timedelta:
    # An import saves its progress after every item: a long silence means its worker is gone.
    return timedelta(minutes=settings.KYBERNESIS_IMPORT_STALE_MINUTES)


def _enqueue_upload(job_id: int) -> None:
    kind = UploadJob.objects.filter(pk=job_id).values_list("kind", flat=True).first() or UploadJob.Kind.TEXT
    upload_job_enqueue(job_id, kind, recovered=True)


_KINDS = (
    # model, statuses a stopped worker leaves behind, how long until stale
    (UploadJob, (UploadJob.Status.PENDING, UploadJob.Status.PROCESSING), _upload_stale_after),
    (ImportJob, (ImportJob.Status.PENDING, ImportJob.Status.RUNNING), _import_stale_after),
)

# How to queue a job of each kind again. Imports run in an app above memories, which registers its
# hook here when it starts: a lower layer never names a higher one.
_requeue: dict[type[models.Model], Callable[[int], None]] = {UploadJob: _enqueue_upload}


def job_requeue_register(model: type[models.Model], enqueue: Callable[[int], None]) -> None:
    """Say how the sweep queues a stalled job of `model` again: `enqueue(job_id)`."""
    _requeue[model] = enqueue


def job_requeue(model: type[models.Model], job_id: int) -> None:
    """Queue a job of `model` again through the hook its app registered."""
    _requeue[model](job_id)


def jobs_recover_stalled(*, now=None) -> dict[str, int]:
    """Queue again every stalled upload and import job (see the module doc); returns counts."""
    now = now or timezone.now()
    counts = {"uploads_requeued": 0, "imports_requeued": 0, "failed": 0}
    for model, statuses, stale_after in _KINDS:
        enqueue = _requeue.get(model)
        if enqueue is None:  # the app that runs these jobs is not installed
            continue
        stalled = model.objects.filter(status__in=statuses, updated_at__lt=now - stale_after()).values_list(
            "pk", "status", "updated_at", "recoveries"
        )
        for pk, status, updated_at, recoveries in stalled:
            outcome = _recover(model, pk, status, updated_at, recoveries, now=now, enqueue=enqueue)
            if outcome == "failed":
                counts["failed"] += 1
            elif outcome == "requeued":
                counts["uploads_requeued" if model is UploadJob else "imports_requeued"] += 1
    if any(counts.values()):
        logger.warning("stalled jobs: %s", counts)
    return counts


def _recover(model, pk: int, status: str, updated_at, recoveries: int, *, now, enqueue) -> str | None:
    claim = model.objects.filter(pk=pk, status=status, updated_at=updated_at)
    with transaction.atomic():
        if recoveries >= settings.KYBERNESIS_JOB_MAX_RECOVERIES:
            finished = {"finished_at": now} if model is ImportJob else {}
            claimed = claim.update(
                status=model.Status.FAILED,
                **finished,
                error=(
                    f"the worker stopped {recoveries + 1} times while processing this job, so it was given "
                    "up; a file this large may need a longer task timeout"
                ),
                updated_at=now,
            )
            if claimed and model is UploadJob and UploadJob.objects.filter(pk=pk).exclude(path="").exists():
                transaction.on_commit(lambda: upload_job_file_remove(pk))  # an OCR job's waiting file
            return "failed" if claimed else None
        claimed = claim.update(status=model.Status.PENDING, recoveries=recoveries + 1, updated_at=now)
        if claimed:
            transaction.on_commit(lambda: enqueue(pk))
    return "requeued" if claimed else None


def jobs_schedule_ensure() -> None:
    """Create or update the schedule of the sweep; safe to call any number of times."""
    schedule_ensure(
        name=SCHEDULE_NAME, func="memories.tasks.jobs_recover", minutes=settings.KYBERNESIS_JOB_SWEEP_MINUTES
    )
