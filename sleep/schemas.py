"""In and Out schemas of the sleep API (camelCase keys)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema


class SleepErrorOut(Schema):
    memoryId: int | None
    message: str
    traceback: str


class SleepStepOut(Schema):
    step: str
    status: str
    startedAt: datetime | None
    completedAt: datetime | None
    checkpoint: int
    metrics: dict[str, Any]
    errors: list[SleepErrorOut]


class SleepRunOut(Schema):
    id: int
    trigger: str
    scope: str
    status: str
    requestedAt: datetime
    startedAt: datetime | None
    completedAt: datetime | None
    heartbeatAt: datetime | None
    durationSeconds: float | None
    currentStep: str
    tasksCompleted: int
    tasksFailed: int
    resumedCount: int
    errorLog: str
    steps: list[SleepStepOut]


class SleepRunPageOut(Schema):
    items: list[SleepRunOut]
    count: int
    limit: int
    offset: int
