"""django-q2 entry points of the sleep agent: ids in, call the pipeline."""

from sleep import pipeline
from sleep.models import SleepRun


def run_cycle(run_id: int) -> str:
    run = pipeline.sleep_run_execute(run_id=run_id)
    return "busy: another cycle is running" if run is None else f"sleep run {run.pk}: {run.status}"


def scheduled_cycle() -> str:
    """The hourly schedule: request the global cycle (or get the one already active)."""
    run, created = pipeline.sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=None)
    return f"sleep run {run.pk} {'queued' if created else 'already active'}"
