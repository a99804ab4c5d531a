"""The sleep cycle: order, metrics, the 7-day re-tag rule, tier moves, summaries, checkpoints, the lock."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from graph.models import MemoryLink
from memories.models import Memory, TierMove
from sleep import pipeline
from sleep.models import SleepRun, SleepStepRun
from sleep.steps.summarize import SummarizeStep
from sleep.steps.tag import TagStep
from sleep.summarizer import MAX_PREVIEW_CHARS, MAX_SUMMARY_CHARS
from tests.factories import make_memory


@pytest.fixture
def no_queue(monkeypatch):
    """Requests queue runs without the synchronous test worker executing them on commit."""
    queued = []
    monkeypatch.setattr("django_q.tasks.async_task", lambda *args, **kwargs: queued.append(args))
    return queued


def cycle(owner=None) -> SleepRun:
    run, _ = pipeline.sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=owner)
    pipeline.sleep_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


TEXTS = [
    "Alice works with the Product Team in San Francisco. The team ships the onboarding redesign in March. "
    "Alice reviews every release with the designers before launch.",
    "The Product Team in San Francisco plans the quarterly roadmap. Alice presents the budget to the board. "
    "Hiring two engineers is the main risk for the roadmap.",
    "Sourdough needs a lively starter, a long cold proof and a very hot oven. Bake it in a Dutch oven for crust.",
]


@pytest.fixture
def memories(user):
    return [make_memory(user, content=text) for text in TEXTS]


def test_steps_run_in_the_spec_order_and_record_metrics(user, memories, no_queue):
    run = cycle(user)
    assert run.status == "completed" and run.tasks_failed == 0
    steps = list(run.steps.order_by("position"))
    assert [s.step for s in steps] == ["tag", "link", "tier", "summarize"]
    assert all(s.status == "completed" and s.started_at and s.completed_at for s in steps)
    assert [s.started_at for s in steps] == sorted(s.started_at for s in steps)
    for step in steps:
        assert {"processed", "changed", "failed", "duration_ms", "batches"} <= step.metrics.keys()
    by_name = {s.step: s for s in steps}
    assert by_name["link"].metrics["processed"] == 3 and by_name["tier"].metrics["processed"] == 3
    assert by_name["summarize"].metrics["processed"] == 3
    assert run.tasks_completed == sum(s.metrics["processed"] for s in steps)


def test_the_link_step_links_memories_that_share_entities(user, memories, no_queue):
    cycle(user)
    a, b, bread = memories
    pair = MemoryLink.objects.filter(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk))
    assert pair.exists()
    assert not MemoryLink.objects.filter(
        source_id=min(a.pk, bread.pk), target_id=max(a.pk, bread.pk), reason="shared_entities"
    ).exists()


def test_links_older_rules_made_are_rescored_by_the_next_cycle_though_nothing_changed(user, memories, no_queue):
    from graph.linkrules import LINK_RULES_VERSION

    cycle(user)
    a, b, _ = memories
    pair = MemoryLink.objects.filter(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk))
    assert pair.exists()
    fresh = {(link.source_id, link.target_id, link.reason): (link.score, link.details) for link in pair}
    # As a link made before this version looks: a score of 1, no weights kept.
    pair.update(rules_version=0, score=1.0, details={})
    run = cycle(user)
    link_step = run.steps.get(step="link")
    assert link_step.metrics["processed"] == 0  # nothing was extracted again ...
    rescored = {(link.source_id, link.target_id, link.reason): (link.score, link.details) for link in pair.all()}
    assert rescored == fresh  # ... yet every old link was scored again by the current rules
    assert not MemoryLink.objects.filter(owner=user, rules_version__lt=LINK_RULES_VERSION).exists()
    again = cycle(user)
    assert again.steps.get(step="link").metrics["links_created"] == 0


def test_summaries_and_previews_stay_within_their_limits(user, no_queue):
    long_text = " ".join(
        f"Sentence number {i} talks about topic {i % 7} in some detail for the reader." for i in range(300)
    )
    memory = make_memory(user, content=long_text)
    short = make_memory(user, content="Buy milk.")
    cycle(user)
    memory.refresh_from_db()
    short.refresh_from_db()
    assert 0 < len(memory.summary) <= MAX_SUMMARY_CHARS and memory.summary.count(".") <= 4
    assert 0 < len(memory.preview) <= MAX_PREVIEW_CHARS and "\n" not in memory.preview
    assert (short.summary, short.preview) == ("Buy milk.", "Buy milk.")
    assert memory.summarized_hash == memory.content_hash


def test_the_tag_step_retags_only_after_seven_days_or_a_content_change(user, memories, no_queue):
    fresh, stale, changed = memories
    Memory.objects.filter(pk=stale.pk).update(auto_tagged_at=timezone.now() - timedelta(days=8))
    Memory.objects.filter(pk=changed.pk).update(auto_tagged_hash="outdated")
    assert set(TagStep().due(pipeline.Scope(owner_id=user.pk, now=timezone.now())).values_list("pk", flat=True)) == {
        stale.pk,
        changed.pk,
    }
    before = Memory.objects.get(pk=fresh.pk).auto_tagged_at
    run = cycle(user)
    tag = run.steps.get(step="tag")
    assert tag.metrics["processed"] == 2
    assert Memory.objects.get(pk=fresh.pk).auto_tagged_at == before
    assert Memory.objects.get(pk=changed.pk).auto_tagged_hash == changed.content_hash


def test_tier_moves_are_recorded_by_the_tier_step(user, no_queue):
    old = make_memory(user, content="A note nobody opened for months.")
    then = timezone.now() - timedelta(days=90)
    Memory.objects.filter(pk=old.pk).update(created_at=then, last_accessed_at=then, priority=0.05)
    run = cycle(user)
    move = TierMove.objects.get(memory=old)
    assert (move.from_tier, move.to_tier, move.cause) == ("hot", "archive", "sleep")
    assert run.steps.get(step="tier").metrics["moved"] == 1


def test_an_idle_cycle_only_reevaluates_tiers(user, memories, no_queue):
    Memory.objects.filter(owner=user).update(auto_tagged_at=timezone.now() - timedelta(days=8))
    first = cycle(user)
    assert first.steps.get(step="tag").metrics["processed"] == 3  # re-tagged, then linked, in one cycle
    run = cycle(user)
    metrics = {s.step: s.metrics for s in run.steps.all()}
    assert metrics["tag"]["processed"] == metrics["link"]["processed"] == metrics["summarize"]["processed"] == 0
    assert metrics["tier"]["processed"] == 3


def test_a_changed_memory_is_linked_and_summarized_again(user, memories, no_queue):
    from memories.services import memory_update

    cycle(user)
    memory_update(memory=memories[2], content="Rye bread wants a stiffer dough and a longer bake than wheat.")
    run = cycle(user)
    metrics = {s.step: s.metrics for s in run.steps.all()}
    assert metrics["link"]["processed"] == 1 and metrics["summarize"]["processed"] == 1
    assert "Rye" in Memory.objects.get(pk=memories[2].pk).summary


def test_a_memory_that_breaks_a_step_is_recorded_and_the_rest_still_run(user, memories, no_queue, monkeypatch):
    from sleep.steps import summarize as summarize_step

    real = summarize_step.summarize

    def fragile(text):
        if "Sourdough" in text:
            raise ValueError("cannot summarize this text")
        return real(text)

    monkeypatch.setattr(summarize_step, "summarize", fragile)
    run = cycle(user)
    assert run.status == "completed" and run.tasks_failed == 1
    step = run.steps.get(step="summarize")
    assert step.metrics["processed"] == 2 and step.metrics["failed"] == 1
    assert step.errors[0]["memoryId"] == memories[2].pk and "cannot summarize" in step.errors[0]["message"]
    assert Memory.objects.get(pk=memories[0].pk).summary


class WorkerDied(BaseException):
    """Stands for a worker killed mid-batch: not an Exception, so nothing in the pipeline catches it."""


def test_a_killed_run_resumes_from_its_checkpoint_and_processes_each_memory_once(user, no_queue, monkeypatch):
    created = [make_memory(user, content=f"Note {i} about the garden, the roses and the pond.") for i in range(7)]
    monkeypatch.setattr(SummarizeStep, "batch_size", 2)
    seen: list[int] = []
    real_process = SummarizeStep.process
    calls = {"n": 0}

    def process(self, scope, ids):
        calls["n"] += 1
        outcome = real_process(self, scope, ids)
        if calls["n"] == 3:  # batch k = 3 dies after its work, before its checkpoint commits
            raise WorkerDied()
        seen.extend(ids)
        return outcome

    monkeypatch.setattr(SummarizeStep, "process", process)
    run, _ = pipeline.sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
    with pytest.raises(WorkerDied):
        pipeline.sleep_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "running" and run.current_step == "summarize"
    step = run.steps.get(step="summarize")
    assert step.checkpoint == sorted(m.pk for m in created)[3]
    # Nothing of the killed batch was kept: its work rolled back with its checkpoint.
    assert Memory.objects.filter(owner=user).exclude(summary="").count() == 4

    finished_before = {s.step: s.completed_at for s in run.steps.filter(status="completed")}
    assert set(finished_before) == {"tag", "link", "tier"}
    SleepRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=6))
    resumed, created_new = pipeline.sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=user)
    assert (resumed.pk, created_new) == (run.pk, True)
    pipeline.sleep_run_execute(run_id=run.pk)
    resumed.refresh_from_db()
    assert resumed.status == "completed" and resumed.resumed_count == 1
    assert sorted(seen) == sorted(m.pk for m in created)  # each memory exactly once
    assert SleepRun.objects.count() == 1 and SleepStepRun.objects.filter(run=run).count() == 4
    assert Memory.objects.filter(owner=user, summary="").count() == 0
    # Steps finished before the kill were not run again.
    assert {s.step: s.completed_at for s in resumed.steps.exclude(step="summarize")} == finished_before


def test_a_running_cycle_is_returned_instead_of_starting_another(user, no_queue):
    first, created = pipeline.sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
    second, created_again = pipeline.sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
    assert created and not created_again and first.pk == second.pk
    global_run, _ = pipeline.sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=None)
    assert global_run.pk != first.pk  # a user's run does not cover everyone


def test_a_global_run_covers_every_users_request(user, other_user, no_queue):
    scheduled, _ = pipeline.sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=None)
    mine, created = pipeline.sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
    assert (mine.pk, created) == (scheduled.pk, False)


@pytest.mark.django_db(transaction=True)
def test_two_cycles_started_at_once_produce_one_run(no_queue):
    results, errors = [], []
    barrier = threading.Barrier(2)

    def request():
        try:
            barrier.wait()
            results.append(pipeline.sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=None)[0].pk)
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1 and SleepRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_only_one_worker_executes_at_a_time(user):
    from django.db import connections

    # Another connection holds the execution lock, as a second worker in the middle of a cycle would.
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [pipeline.EXECUTE_LOCK])
    try:
        queued = SleepRun.objects.create(trigger="manual", owner=user, status="queued")
        assert pipeline.sleep_run_execute(run_id=queued.pk) is None
        assert SleepRun.objects.get(pk=queued.pk).status == "queued"
    finally:
        other.close()


def test_the_hourly_schedule_exists_once(db):
    from django_q.models import Schedule

    pipeline.sleep_schedule_ensure()
    pipeline.sleep_schedule_ensure()
    schedule = Schedule.objects.get(name=pipeline.SCHEDULE_NAME)
    assert (schedule.func, schedule.minutes, schedule.repeats) == ("sleep.tasks.scheduled_cycle", 60, -1)
    assert Schedule.objects.filter(func="sleep.tasks.scheduled_cycle").count() == 1


def test_the_scheduled_task_runs_a_global_cycle(user, memories, django_capture_on_commit_callbacks):
    from sleep.tasks import scheduled_cycle

    with django_capture_on_commit_callbacks(execute=True):
        scheduled_cycle()
    run = SleepRun.objects.get()
    assert (run.owner_id, run.trigger, run.status) == (None, "scheduled", "completed")
    assert run.steps.get(step="summarize").metrics["processed"] == 3


def test_the_link_step_does_not_extract_again_what_the_ingest_task_did(
    user, no_queue, django_capture_on_commit_callbacks
):
    from graph.models import EntityMention

    with django_capture_on_commit_callbacks(execute=True):
        done = make_memory(user, content=TEXTS[0])
    from django.db.models import F

    assert Memory.objects.filter(pk=done.pk, graph_extraction__content_hash=F("content_hash")).exists()
    fresh = make_memory(user, content=TEXTS[1])  # its ingest task has not run
    run = cycle(user)
    link = run.steps.get(step="link").metrics
    assert (link["processed"], link["extracted"]) == (2, 1)
    assert EntityMention.objects.filter(memory=fresh).exists()
    assert Memory.objects.filter(pk=fresh.pk, graph_extraction__content_hash=F("content_hash")).exists()


@pytest.mark.django_db(transaction=True)
def test_the_scheduled_task_runs_the_cycle_in_a_child_process_when_its_worker_may_not_fork(monkeypatch):
    """django-q2 workers are daemonic: the task starts `manage.py sleep_execute` instead, which may fork."""
    from sleep import tasks
    from tests.factories import UserFactory, make_memory

    owner = UserFactory()
    for i in range(3):
        make_memory(owner, title=f"Note {i}", content=f"Ada Lovelace wrote about the Analytical Engine, part {i}.")
    run, _ = pipeline.sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=None)
    monkeypatch.setattr(tasks, "can_fork", lambda: False)
    assert tasks.run_cycle(run.pk) == f"sleep run {run.pk}: completed (in a child process)"
    run.refresh_from_db()
    assert run.status == SleepRun.Status.COMPLETED
    assert [s.status for s in run.steps.order_by("position")] == [SleepStepRun.Status.COMPLETED] * 4
    assert Memory.objects.filter(owner=owner).exclude(summary="").count() == 3
