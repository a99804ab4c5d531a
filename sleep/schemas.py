"""Out schemas of the sleep API (camelCase keys)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.schemas import OutSchema
from sleep import selectors


def _details_visible(run, context) -> bool:
    """Per-memory errors and checkpoints of a global run are for staff; computed once per run."""
    cached = getattr(run, "_details_visible", None)
    if cached is None:
        request = (context or {}).get("request")
        cached = selectors.sleep_run_details_visible(user=getattr(request, "auth", None), run=run)
        run._details_visible = cached
    return cached


class SleepErrorOut(OutSchema):
    memory_id: int | None
    message: str
    traceback: str

    @staticmethod
    def resolve_memory_id(error) -> int | None:
        return error.get("memoryId")


class SleepStepOut(OutSchema):
    step: str
    status: str
    started_at: datetime | None
    completed_at: datetime | None
    checkpoint: int
    metrics: dict[str, Any]
    errors: list[SleepErrorOut]

    @staticmethod
    def resolve_checkpoint(step, context) -> int:
        return step.checkpoint if _details_visible(step.run, context) else 0

    @staticmethod
    def resolve_errors(step, context) -> list:
        return step.errors if _details_visible(step.run, context) else []


class SleepRunOut(OutSchema):
    id: int
    trigger: str
    scope: str
    status: str
    requested_at: datetime
    started_at: datetime | None
    completed_at: datetime | None
    heartbeat_at: datetime | None
    duration_seconds: float | None
    current_step: str
    tasks_completed: int
    tasks_failed: int
    resumed_count: int
    error_log: str
    steps: list[SleepStepOut]

    @staticmethod
    def resolve_scope(run) -> str:
        return "mine" if run.owner_id else "all users"

    @staticmethod
    def resolve_error_log(run, context) -> str:
        return run.error_log if _details_visible(run, context) else ""

    @staticmethod
    def resolve_steps(run) -> list:
        steps = sorted(run.steps.all(), key=lambda s: s.position)
        for step in steps:
            step.run = run  # the same instance, so the visibility is decided once per run
        return steps
