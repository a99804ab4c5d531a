"""django-q2 entry points of the sleep agent: ids in, call the pipeline."""

from core.workers import can_fork
from sleep import pipeline
from sleep.child import cycle_in_child
from sleep.models import SleepRun


def run_cycle(run_id: int) -> str:
    if not can_fork():
        # A daemonic django-q2 worker: the cycle runs in a child that may fork the worker pool.
        report = cycle_in_child(run_id)
        return f"sleep run {report['id']}: {report['status']} (in a child process)"
    run = pipeline.sleep_run_execute(run_id=run_id)
    return "busy: another cycle is running" if run is None else f"sleep run {run.pk}: {run.status}"


def scheduled_cycle() -> str:
    """The hourly schedule: request the global cycle (or get the one already active)."""
    run, created = pipeline.sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=None)
    return f"sleep run {run.pk} {'queued' if created else 'already active'}"
