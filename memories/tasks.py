"""django-q2 entry points for memories: ids in, call a service."""

from memories import services
from memories.models import ImportJob
from memories.services import jobs


def ingest_upload(job_id: int) -> None:
    services.upload_job_run(job_id=job_id)


def ocr_upload(job_id: int) -> None:
    services.ocr_upload_run(job_id=job_id)


def import_run(job_id: int) -> None:
    """Import tasks queued by an older release name this path, and queued rows outlive a deploy: the
    job is queued again through the hook of the app that runs imports."""
    jobs.job_requeue(ImportJob, job_id)


def jobs_recover() -> None:
    jobs.jobs_recover_stalled()


def originals_collect() -> int:
    return services.originals_collect()


def trash_purge_expired() -> int:
    return services.trash_purge_expired()
