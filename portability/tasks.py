"""django-q2 entry points for portability: ids in, call a service."""

from portability import services


def import_run(job_id: int) -> None:
    services.import_job_run(job_id=job_id)
