"""Repeating django-q2 schedules: created or updated by name, and kept after every migrate."""

from __future__ import annotations

from django.db.models.signals import post_migrate
from django.utils.module_loading import import_string


def schedule_ensure(*, name: str, func: str, minutes: int) -> None:
    """Create or update the schedule that runs `func` every `minutes`; safe to call any number of times."""
    from django_q.models import Schedule

    Schedule.objects.update_or_create(
        name=name, defaults={"func": func, "schedule_type": Schedule.MINUTES, "minutes": minutes, "repeats": -1}
    )


def ensure_after_migrate(app_config, ensure: str) -> None:
    """Call the function at dotted path `ensure` after every migrate of the app, so its schedule
    exists and follows its interval setting."""

    def receiver(sender, **kwargs) -> None:
        import_string(ensure)()

    post_migrate.connect(
        receiver, sender=app_config, weak=False, dispatch_uid=f"{app_config.name}.ensure_schedule.{ensure}"
    )
