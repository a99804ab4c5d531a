"""The portability app's config: at start-up it tells the stalled-job sweep of memories how to queue imports."""

from django.apps import AppConfig


class PortabilityConfig(AppConfig):
    name = "portability"
    verbose_name = "Export and import"

    def ready(self) -> None:
        from memories.models import ImportJob
        from memories.services.jobs import job_requeue_register
        from portability.services.import_jobs import import_job_requeue

        # The stalled-job sweep lives in memories, below this app: it queues imports through this hook.
        job_requeue_register(ImportJob, import_job_requeue)
