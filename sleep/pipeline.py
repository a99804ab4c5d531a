"""The sleep cycle: one run at a time, four steps in order, a checkpoint after every batch, resumable.

Requesting a cycle (`sleep_run_request`) is serialised by a transaction-level advisory lock, so two
workers racing for the hourly schedule, or two people pressing "Run now", get the same run back.
Executing one (`sleep_run_execute`) holds a session-level advisory lock for its whole length, so at
most one cycle works at any moment, whichever worker runs it; a worker that dies drops its
connection and with it the lock. Each batch's work and its checkpoint commit together: a run cut off
mid-batch redoes only that batch when it resumes, so every memory is processed exactly once.
"""

from __future__ import annotations

import logging
import time
import traceback
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, TextField, Value
from django.db.models.functions import Concat
from django.utils import timezone

from core.actors import SLEEP_AGENT, acting
from core.schedules import schedule_ensure
from sleep.models import SleepRun, SleepStepRun
from sleep.steps import Scope, Step
from sleep.steps.link import LinkStep
from sleep.steps.summarize import SummarizeStep
from sleep.steps.tag import TagStep
from sleep.steps.tier import TierStep

logger = logging.getLogger(__name__)

STEPS: list[type[Step]] = [TagStep, LinkStep, TierStep, SummarizeStep]
MAX_ERRORS = 100
# Advisory lock keys (arbitrary constants, one per purpose).
REQUEST_LOCK = 0x6B79_6201
EXECUTE_LOCK = 0x6B79_6202


def _append(line: str):
    return Concat(F("error_log"), Value(line.rstrip("\n") + "\n"), output_field=TextField())


def _stale_before():
    return timezone.now() - timedelta(seconds=settings.KYBERNESIS_SLEEP_HEARTBEAT_TIMEOUT)


def sleep_runs_interrupt_stale() -> int:
    """Mark runs whose worker stopped beating as interrupted, so the next request resumes them."""
    stale = _stale_before()
    return SleepRun.objects.filter(
        Q(status=SleepRun.Status.RUNNING) & (Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True))
    ).update(
        status=SleepRun.Status.INTERRUPTED,
        error_log=_append(
            "Interrupted: the worker stopped reporting progress; the next cycle resumes from the last checkpoint."
        ),
    )


def sleep_run_request(*, trigger: str, owner=None) -> tuple[SleepRun, bool]:
    """Queue a cycle, or return the active one that already covers this request. (run, created)."""
    from django_q.tasks import async_task

    owner_id = getattr(owner, "pk", None)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [REQUEST_LOCK])
        sleep_runs_interrupt_stale()
        for active in SleepRun.objects.filter(status__in=SleepRun.ACTIVE).order_by("pk"):
            # A global run covers everyone; a user's own run covers them. Another user's run does not,
            # and is never handed out: this request queues behind it instead.
            if active.owner_id is None or active.owner_id == owner_id:
                return active, False
        run = SleepRun.objects.filter(status=SleepRun.Status.INTERRUPTED, owner_id=owner_id).order_by("-pk").first()
        if run is not None:
            run.status, run.resumed_count = SleepRun.Status.QUEUED, run.resumed_count + 1
            run.save(update_fields=["status", "resumed_count"])
        else:
            run = SleepRun.objects.create(trigger=trigger, owner_id=owner_id, status=SleepRun.Status.QUEUED)
            SleepStepRun.objects.bulk_create(
                SleepStepRun(run=run, step=step.name, position=i) for i, step in enumerate(STEPS)
            )
        run_id = run.pk
        transaction.on_commit(
            lambda: async_task(
                "sleep.tasks.run_cycle",
                run_id,
                task_name=f"sleep run {run_id}",
                timeout=settings.KYBERNESIS_Q_LONG_TIMEOUT,
            )
        )
    return run, True


def sleep_run_execute(*, run_id: int) -> SleepRun | None:
    """Run a queued cycle to the end in this process, then any cycle queued meanwhile behind it.
    Returns the run, or None when another worker is executing a cycle (it picks this one up next)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [EXECUTE_LOCK])
        if not cursor.fetchone()[0]:
            return None
    try:
        run = _execute(run_id)
        # Requests queued while this run held the lock would otherwise wait for the next hour.
        while (queued := SleepRun.objects.filter(status=SleepRun.Status.QUEUED).order_by("pk").first()) is not None:
            _execute(queued.pk)
        return run
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [EXECUTE_LOCK])


def _execute(run_id: int) -> SleepRun | None:
    # Everything the cycle writes (summaries, tags, tiers, links) is the sleep agent's doing.
    with acting(SLEEP_AGENT):
        return _execute_as_agent(run_id)


def _execute_as_agent(run_id: int) -> SleepRun | None:
    run = SleepRun.objects.filter(pk=run_id).first()
    if run is None or run.status not in (SleepRun.Status.QUEUED, SleepRun.Status.INTERRUPTED):
        return run
    now = timezone.now()
    SleepRun.objects.filter(pk=run.pk).update(
        status=SleepRun.Status.RUNNING, heartbeat_at=now, started_at=run.started_at or now
    )
    run.refresh_from_db()
    scope = Scope(owner_id=run.owner_id, now=now, changed_since=_changed_since(run))
    try:
        for step_run in run.steps.order_by("position"):
            if step_run.status != SleepStepRun.Status.COMPLETED:
                _run_step(run, step_run, _step(step_run.step), scope)
    except Exception as exc:  # a step that cannot go on at all: the run fails, with its reason kept
        logger.exception("sleep run %s failed", run.pk)
        SleepRun.objects.filter(pk=run.pk).update(
            status=SleepRun.Status.FAILED,
            completed_at=timezone.now(),
            error_log=_append(f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"),
        )
    else:
        SleepRun.objects.filter(pk=run.pk).update(
            status=SleepRun.Status.COMPLETED, completed_at=timezone.now(), current_step=""
        )
    run.refresh_from_db()
    return run


def _step(name: str) -> Step:
    return next(step for step in STEPS if step.name == name)()


def _changed_since(run: SleepRun):
    """Memories changed since the last completed cycle over the same memories began need linking."""
    covering = SleepRun.objects.filter(status=SleepRun.Status.COMPLETED).exclude(pk=run.pk)
    covering = (
        covering.filter(owner__isnull=True)
        if run.owner_id is None
        else covering.filter(Q(owner_id=run.owner_id) | Q(owner__isnull=True))
    )
    last = covering.order_by("-started_at").values_list("started_at", flat=True).first()
    return last


def _run_step(run: SleepRun, step_run: SleepStepRun, step: Step, scope: Scope) -> None:
    started = time.perf_counter()
    step_run.status = SleepStepRun.Status.RUNNING
    step_run.started_at = step_run.started_at or timezone.now()
    step_run.save(update_fields=["status", "started_at"])
    SleepRun.objects.filter(pk=run.pk).update(current_step=step.name, heartbeat_at=timezone.now())
    metrics = {"processed": 0, "changed": 0, "failed": 0, "batches": 0, **step_run.metrics}
    elapsed_before = metrics.get("duration_ms", 0)
    while ids := step.next_batch(scope, step_run.checkpoint):
        with transaction.atomic():
            outcome = step.process(scope, ids)
            metrics["processed"] += outcome.processed
            metrics["changed"] += outcome.changed
            metrics["failed"] += len(outcome.failures)
            metrics["batches"] += 1
            for key, value in outcome.metrics.items():
                metrics[key] = metrics.get(key, 0) + value
            metrics["duration_ms"] = elapsed_before + round((time.perf_counter() - started) * 1000)
            step_run.checkpoint = ids[-1]
            step_run.metrics = metrics
            step_run.errors = (step_run.errors + outcome.failures)[:MAX_ERRORS]
            step_run.save(update_fields=["checkpoint", "metrics", "errors"])
            SleepRun.objects.filter(pk=run.pk).update(
                heartbeat_at=timezone.now(),
                tasks_completed=F("tasks_completed") + outcome.processed,
                tasks_failed=F("tasks_failed") + len(outcome.failures),
            )
    metrics.update(step.finish(scope))
    metrics["duration_ms"] = elapsed_before + round((time.perf_counter() - started) * 1000)
    step_run.status = SleepStepRun.Status.COMPLETED
    step_run.completed_at = timezone.now()
    step_run.metrics = metrics
    step_run.save(update_fields=["status", "completed_at", "metrics"])


def sleep_schedule_ensure() -> None:
    """Create or update the hourly schedule of the global cycle; safe to call any number of times."""
    schedule_ensure(
        name=SCHEDULE_NAME, func="sleep.tasks.scheduled_cycle", minutes=settings.KYBERNESIS_SLEEP_INTERVAL_MINUTES
    )


SCHEDULE_NAME = "sleep: the hourly cycle over every memory"
