"""The task-run log (core.task_runs): each execution of a task leaves one TaskRun row, ended or not."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.tasks import async_task

from core import task_runs
from core.models import TaskRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def logging_on(settings):
    settings.KYBERNESIS_TASK_RUNS = True


def test_each_execution_records_one_run_with_its_function_args_worker_and_outcome(logging_on):
    before = timezone.now()
    async_task("math.floor", 2.5, task_name="floor")
    with pytest.raises(TypeError):  # the synchronous test worker raises what the task raised
        async_task("math.floor", "not a number", task_name="broken")

    ok, failed = TaskRun.objects.order_by("started_at")
    assert (ok.func, ok.name, ok.args, ok.success) == ("math.floor", "floor", [2.5], True)
    assert ok.pid == os.getpid() and ok.host and ok.task_id
    assert before <= ok.started_at <= ok.finished_at
    assert (failed.name, failed.args, failed.success) == ("broken", ["not a number"], False)
    assert failed.finished_at is not None


def test_a_run_whose_worker_died_has_no_end(logging_on):
    task = {"id": "a" * 32, "name": "killed", "func": "graph.tasks.extract_memories", "args": ([7, 8],)}
    task_runs.record_start("django_q", func=None, task=task)  # the worker is killed before it returns

    run = TaskRun.objects.get()
    assert (run.func, run.args, run.finished_at, run.success) == ("graph.tasks.extract_memories", [[7, 8]], None, None)


def test_arguments_that_are_not_json_are_stored_as_their_repr(logging_on):
    task = {"id": "b" * 32, "name": "odd", "func": "x.y", "args": (object(), 3)}
    task_runs.record_start("django_q", func=None, task=task)
    assert TaskRun.objects.get().args[0].startswith("<object object")


def test_nothing_is_recorded_when_the_log_is_off(settings):
    settings.KYBERNESIS_TASK_RUNS = False
    async_task("math.floor", 2.5)
    assert not TaskRun.objects.exists()


def test_runs_older_than_the_retention_are_pruned_as_runs_end(logging_on, settings, monkeypatch):
    settings.KYBERNESIS_TASK_RUN_DAYS = 7
    monkeypatch.setattr(task_runs, "_PRUNE_EVERY", 1)
    old = TaskRun.objects.create(
        task_id="c" * 32, func="x.y", host="h", pid=1, started_at=timezone.now() - timedelta(days=8)
    )
    async_task("math.floor", 1.5)
    assert not TaskRun.objects.filter(pk=old.pk).exists()
    assert TaskRun.objects.count() == 1
