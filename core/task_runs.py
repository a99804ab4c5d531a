"""The task-run log: a TaskRun row per execution of a django-q2 task, written by the worker that runs it."""

from __future__ import annotations

import itertools
import json
import logging
import os
import socket
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from core.models import TaskRun

logger = logging.getLogger(__name__)
_RUN_KEY = "kybernesis_run_id"
_PRUNE_EVERY = 100
_finished = itertools.count(1)


def _json_args(args) -> list:
    try:
        return json.loads(json.dumps(list(args)))
    except (TypeError, ValueError):
        return [repr(arg)[:200] for arg in args]


def _func_name(func, task: dict) -> str:
    if isinstance(task.get("func"), str):
        return task["func"][:255]
    return f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', repr(func))}"[:255]


def record_start(sender, func=None, task=None, **kwargs) -> None:
    """pre_execute: a worker is about to run the task."""
    if not settings.KYBERNESIS_TASK_RUNS or task is None:
        return
    try:
        run = TaskRun.objects.create(
            task_id=str(task.get("id", ""))[:32],
            name=str(task.get("name", ""))[:100],
            func=_func_name(func, task),
            args=_json_args(task.get("args", ())),
            host=socket.gethostname()[:255],
            pid=os.getpid(),
            started_at=timezone.now(),
        )
    except Exception:  # the log must never stop a task from running
        logger.exception("could not record the start of task %s", task.get("id"))
        return
    task[_RUN_KEY] = run.pk


def record_finish(sender, func=None, task=None, **kwargs) -> None:
    """post_execute_in_worker: the task returned or raised (a killed worker never gets here)."""
    if task is None or _RUN_KEY not in task:
        return
    run_id = task.pop(_RUN_KEY)
    try:
        TaskRun.objects.filter(pk=run_id).update(finished_at=timezone.now(), success=bool(task.get("success")))
        if next(_finished) % _PRUNE_EVERY == 0:
            cutoff = timezone.now() - timedelta(days=settings.KYBERNESIS_TASK_RUN_DAYS)
            TaskRun.objects.filter(started_at__lt=cutoff).delete()
    except Exception:
        logger.exception("could not record the end of task run %s", run_id)
