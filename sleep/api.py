"""The sleep router: list runs, read one with its steps, start one."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import paginate

from core.pagination import LimitOffset
from core.schemas import ErrorOut, Id
from sleep import selectors
from sleep.models import SleepRun
from sleep.pipeline import sleep_run_request
from sleep.schemas import SleepRunOut

router = Router(tags=["sleep"], by_alias=True)
ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


@router.get("/sleep/runs", response={200: list[SleepRunOut], **ERRORS}, summary="List sleep runs")
@paginate(LimitOffset, default=20, maximum=200)
def list_runs(request: HttpRequest):
    """Your runs and the global hourly ones (whose per-memory errors only staff see), newest first."""
    return selectors.sleep_run_list(user=request.auth)


@router.get("/sleep/runs/{run_id}", response={200: SleepRunOut, **ERRORS}, summary="Read a sleep run")
def get_run(request: HttpRequest, run_id: Id):
    return selectors.sleep_run_get(user=request.auth, run_id=run_id)


@router.post("/sleep/runs", response={200: SleepRunOut, 202: SleepRunOut, **ERRORS}, summary="Start a sleep cycle")
def start_run(request: HttpRequest):
    """A cycle over your memories: 202 with the queued run, or 200 with the run already active."""
    run, created = sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=request.auth)
    return Status(202 if created else 200, selectors.sleep_run_get(user=request.auth, run_id=run.pk))
