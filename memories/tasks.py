"""django-q2 entry points for memories: ids in, call a service."""

from memories import services
from memories.services import jobs


def ingest_upload(job_id: int) -> None:
    services.upload_job_run(job_id=job_id)


def jobs_recover() -> None:
    jobs.jobs_recover_stalled()


def originals_collect() -> int:
    from memories.services.originals import originals_collect as collect

    return collect()
