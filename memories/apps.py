from django.apps import AppConfig

from core.schedules import ensure_after_migrate


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self) -> None:
        from memories import signals  # noqa: F401 - connects the receivers
        from memories.services import originals  # noqa: F401 - removes a file when its last memory goes

        # After every migrate, so orphaned originals (a rolled-back write, an expired undo) are collected.
        ensure_after_migrate(self, "memories.services.originals.originals_schedule_ensure")
        ensure_after_migrate(self, "memories.services.jobs.jobs_schedule_ensure")
        ensure_after_migrate(self, "memories.services.trash.trash_schedule_ensure")
