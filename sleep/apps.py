from django.apps import AppConfig

from core.schedules import ensure_after_migrate


class SleepConfig(AppConfig):
    name = "sleep"
    verbose_name = "Sleep agent"

    def ready(self) -> None:
        # After every migrate, so the schedule exists and follows KYBERNESIS_SLEEP_INTERVAL_MINUTES.
        ensure_after_migrate(self, "sleep.pipeline.sleep_schedule_ensure")
