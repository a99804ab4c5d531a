"""Import jobs, for the API, the page and MCP: the uploaded file kept for the worker (or a server-side
path, when an admin allows its folder), what it is told by its content before the job is queued (202
at the front door, or a reason), then run with its progress saved as it goes."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.tasks import async_task

from core.actors import Actor, acting
from memories.models import ImportJob
from memories.services.validation import MemoryInputError, MemoryTooLargeError
from portability.services.import_ import ImportReport, import_path
from portability.sources import ImportSourceError, detect, reader_label

logger = logging.getLogger(__name__)


def _imports_dir() -> Path:
    path = Path(settings.DATA_DIR) / "imports"
    path.mkdir(parents=True, exist_ok=True)
    return path


# What the file input offers; the content decides what a file is (portability.sources.registry).
ACCEPTED_SUFFIXES = (".zip", ".json", ".jsonl", ".md", ".markdown", ".mbox", ".mbx", ".eml")


def import_job_create(*, owner, upload) -> ImportJob:
    """Keep the uploaded file for the worker and queue the job (202 at the front door). What the file
    is is told by its content, here, so a file no reader takes is refused at once with what it looks
    like, instead of failing in the worker."""
    name = (getattr(upload, "name", "") or "import").rsplit("/", 1)[-1][:255]
    if not upload.size:
        raise MemoryInputError(f"{name!r} is empty", field="file")
    limit = settings.KYBERNESIS_MAX_IMPORT_BYTES
    if upload.size > limit:
        raise MemoryTooLargeError(f"{name!r} is {upload.size:,} bytes; the limit is {limit:,}", field="file")
    path = _imports_dir() / f"{uuid.uuid4().hex}-{Path(name).suffix.lower()[:16]}"
    with open(path, "wb") as handle:
        handle.writelines(upload.chunks())
    try:
        reader, _ = detect(path, name)
    except ImportSourceError as exc:
        path.unlink(missing_ok=True)
        raise MemoryInputError(str(exc), field="file") from None
    return _queue(owner=owner, name=name, path=path, kind=reader.kind)


def import_allowed_dirs() -> list[Path]:
    """The server folders an admin lets imports read from a path (KYBERNESIS_IMPORT_ALLOWED_DIRS)."""
    return [Path(d).resolve() for d in settings.KYBERNESIS_IMPORT_ALLOWED_DIRS]


def import_path_check(path: str) -> Path:
    """The server-side path an import may read, resolved (symbolic links followed), or MemoryInputError
    saying why not: path imports are off unless an admin lists folders, and the path must resolve
    inside one of them."""
    allowed = import_allowed_dirs()
    if not allowed:
        raise MemoryInputError(
            "importing from a server-side path is turned off; an admin can allow folders with "
            "KYBERNESIS_IMPORT_ALLOWED_DIRS, or upload the file instead",
            field="path",
        )
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise MemoryInputError("give the absolute path of a file or folder on the server", field="path")
    given = Path(path.strip())
    if not given.is_absolute():
        raise MemoryInputError(f"{path!r} is not an absolute path", field="path")
    try:
        resolved = given.resolve(strict=True)
    except (OSError, RuntimeError):
        raise MemoryInputError(f"{path!r} does not exist on the server", field="path") from None
    if not any(resolved == root or resolved.is_relative_to(root) for root in allowed):
        folders = ", ".join(str(root) for root in allowed)
        raise MemoryInputError(
            f"{path!r} is outside the folders an admin allowed for imports ({folders})", field="path"
        )
    return resolved


def import_job_create_from_path(*, owner, path: str) -> ImportJob:
    """Queue an import of a file or folder on the server (MCP), within the allowed folders; the file is
    read where it is and left there."""
    resolved = import_path_check(path)
    if resolved.is_file():
        limit = settings.KYBERNESIS_MAX_IMPORT_BYTES
        size = resolved.stat().st_size
        if size > limit:
            raise MemoryTooLargeError(f"{resolved.name!r} is {size:,} bytes; the limit is {limit:,}", field="path")
    elif not resolved.is_dir():
        raise MemoryInputError(f"{path!r} is neither a file nor a folder", field="path")
    try:
        reader, _ = detect(resolved, resolved.name)
    except ImportSourceError as exc:
        raise MemoryInputError(str(exc), field="path") from None
    name = resolved.name[:255] or str(resolved)[:255]
    return _queue(owner=owner, name=name, path=resolved, kind=reader.kind, server_path=True)


def _queue(*, owner, name: str, path: Path, kind: str, server_path: bool = False) -> ImportJob:
    with transaction.atomic():
        job = ImportJob.objects.create(owner=owner, filename=name, path=str(path), kind=kind, server_path=server_path)
        transaction.on_commit(lambda: async_task("portability.tasks.import_run", job.pk, task_name=f"import {job.pk}"))
    return job


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
            notices=report.notices,
            **({"kind": report.kind} if report.kind else {}),
            updated_at=timezone.now(),
        )

    path = Path(job.path)
    upload = not job.server_path
    try:
        if job.server_path:  # still inside an allowed folder now, when it is read
            path = import_path_check(job.path)
        with acting(Actor.importer(f"{reader_label(job.kind)} import" if job.kind else "import")):
            report = import_path(owner=job.owner, path=path, name=job.filename, progress=progress)
    except MemoryInputError as exc:
        report = last
        report.error = f"the import did not start: {exc}"
    except Exception as exc:
        logger.exception("import job %s failed", job.pk)
        # What was stored before it stopped stays stored (each batch commits), and the job says so.
        report = last
        report.error = f"the import stopped: {exc}"
    finally:
        if upload:
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
