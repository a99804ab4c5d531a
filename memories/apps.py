from django.apps import AppConfig

from core.schedules import ensure_after_migrate


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self) -> None:
        from memories import signals  # noqa: F401 - connects the receivers

        ensure_after_migrate(self, "memories.services.jobs.jobs_schedule_ensure")
