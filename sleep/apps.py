from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_schedule(sender, **kwargs) -> None:
    from sleep.pipeline import sleep_schedule_ensure

    sleep_schedule_ensure()


class SleepConfig(AppConfig):
    name = "sleep"
    verbose_name = "Sleep agent"

    def ready(self) -> None:
        # After every migrate, so the schedule exists and follows KYBERNESIS_SLEEP_INTERVAL_MINUTES.
        post_migrate.connect(_ensure_schedule, sender=self, dispatch_uid="sleep.ensure_schedule")
