"""The sleep router: list runs, read one with its steps, start one."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import Field

from core.schemas import MAX_OFFSET, ErrorOut, Id
from sleep import selectors
from sleep.models import SleepRun
from sleep.pipeline import sleep_run_request
from sleep.schemas import SleepRunOut, SleepRunPageOut

router = Router(tags=["sleep"])
ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


def sleep_run_out(run: SleepRun, *, user) -> dict:
    detailed = selectors.sleep_run_details_visible(user=user, run=run)
    return {
        "id": run.pk, "trigger": run.trigger, "scope": "mine" if run.owner_id else "all users",
        "status": run.status, "requestedAt": run.requested_at, "startedAt": run.started_at,
        "completedAt": run.completed_at, "heartbeatAt": run.heartbeat_at, "durationSeconds": run.duration_seconds,
        "currentStep": run.current_step, "tasksCompleted": run.tasks_completed, "tasksFailed": run.tasks_failed,
        "resumedCount": run.resumed_count, "errorLog": run.error_log if detailed else "",
        "steps": [
            {"step": s.step, "status": s.status, "startedAt": s.started_at, "completedAt": s.completed_at,
             "checkpoint": s.checkpoint if detailed else 0, "metrics": s.metrics,
             "errors": s.errors if detailed else []}
            for s in sorted(run.steps.all(), key=lambda s: s.position)
        ],
    }


class RunListQuery(Schema):
    limit: int = Field(20, ge=1, le=200)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


@router.get("/sleep/runs", response={200: SleepRunPageOut, **ERRORS}, summary="List sleep runs")
def list_runs(request: HttpRequest, query: Query[RunListQuery]):
    """Your runs and the global hourly ones (whose per-memory errors only staff see), newest first."""
    qs = selectors.sleep_run_list(user=request.auth)
    page = list(qs[query.offset:query.offset + query.limit])
    return {"items": [sleep_run_out(r, user=request.auth) for r in page], "count": qs.count(),
            "limit": query.limit, "offset": query.offset}


@router.get("/sleep/runs/{run_id}", response={200: SleepRunOut, **ERRORS}, summary="Read a sleep run")
def get_run(request: HttpRequest, run_id: Id):
    return sleep_run_out(selectors.sleep_run_get(user=request.auth, run_id=run_id), user=request.auth)


@router.post("/sleep/runs", response={200: SleepRunOut, 202: SleepRunOut, **ERRORS}, summary="Start a sleep cycle")
def start_run(request: HttpRequest):
    """A cycle over your memories: 202 with the queued run, or 200 with the run already active."""
    run, created = sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=request.auth)
    run = selectors.sleep_run_get(user=request.auth, run_id=run.pk)
    return Status(202 if created else 200, sleep_run_out(run, user=request.auth))
