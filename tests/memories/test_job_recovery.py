"""Uploads and imports whose worker stopped are queued again and finish, once, without duplicates."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import Schedule

from memories.models import ImportJob, Memory, UploadJob
from memories.services import jobs
from tests.factories import ImportJobFactory, UploadJobFactory, make_memory

pytestmark = pytest.mark.django_db


def _stall(job, *, status, minutes_ago):
    type(job).objects.filter(pk=job.pk).update(
        status=status, updated_at=timezone.now() - timedelta(minutes=minutes_ago)
    )


def test_an_upload_left_processing_by_a_dead_worker_is_ingested(user, django_capture_on_commit_callbacks):
    job = UploadJobFactory(owner=user, title="Kyoto", text="Fushimi Inari early, then Nishiki market for lunch.")
    _stall(job, status=UploadJob.Status.PROCESSING, minutes_ago=60)
    with django_capture_on_commit_callbacks(execute=True):
        counts = jobs.jobs_recover_stalled()
    assert counts == {"uploads_requeued": 1, "imports_requeued": 0, "failed": 0}
    job.refresh_from_db()
    assert job.status == UploadJob.Status.DONE and job.recoveries == 1
    assert job.memory.title == "Kyoto"


def test_a_recovered_upload_whose_memory_was_already_stored_is_not_stored_twice(
    user, django_capture_on_commit_callbacks
):
    text = "The worker stored this memory, then died before it marked the job done."
    stored = make_memory(user, content=text, title="Stored")
    job = UploadJobFactory(owner=user, title="Stored", text=text)
    _stall(job, status=UploadJob.Status.PROCESSING, minutes_ago=60)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.jobs_recover_stalled()
    job.refresh_from_db()
    assert job.status == UploadJob.Status.DONE and job.memory_id == stored.pk
    assert Memory.objects.filter(owner=user).count() == 1


def test_an_import_left_running_is_resumed_without_duplicates(user, tmp_path, django_capture_on_commit_callbacks):
    path = tmp_path / "notes.jsonl"
    lines = [{"title": f"Note {i}", "content": f"Resumable import, distinct note number {i}."} for i in range(3)]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    make_memory(user, content=lines[0]["content"], title="Note 0")  # stored by the run that died
    job = ImportJobFactory(owner=user, filename="notes.jsonl", path=str(path))
    _stall(job, status=ImportJob.Status.RUNNING, minutes_ago=30)
    with django_capture_on_commit_callbacks(execute=True):
        counts = jobs.jobs_recover_stalled()
    assert counts["imports_requeued"] == 1
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE and (job.created, job.duplicates) == (2, 1)
    assert Memory.objects.filter(owner=user).count() == 3
    assert not path.exists(), "the waiting file is removed once the import ends"


def test_an_import_task_queued_under_the_memories_path_still_runs_the_job(user, tmp_path):
    from django_q.tasks import async_task

    path = tmp_path / "notes.jsonl"
    path.write_text(json.dumps({"title": "Queued", "content": "Queued before the import task moved."}) + "\n")
    job = ImportJobFactory(owner=user, filename="notes.jsonl", path=str(path))

    async_task("memories.tasks.import_run", job.pk)  # the test settings run tasks at once

    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE and job.created == 1
    assert Memory.objects.filter(owner=user, title="Queued").exists()


def test_live_jobs_are_left_alone(user, django_capture_on_commit_callbacks):
    upload = UploadJobFactory(owner=user)
    _stall(upload, status=UploadJob.Status.PROCESSING, minutes_ago=5)  # within its task timeout
    running = ImportJobFactory(owner=user)
    _stall(running, status=ImportJob.Status.RUNNING, minutes_ago=2)  # progress two minutes ago
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert jobs.jobs_recover_stalled() == {"uploads_requeued": 0, "imports_requeued": 0, "failed": 0}
    assert callbacks == []
    assert UploadJob.objects.get(pk=upload.pk).status == UploadJob.Status.PROCESSING
    assert ImportJob.objects.get(pk=running.pk).status == ImportJob.Status.RUNNING


def test_a_job_that_keeps_stopping_its_worker_fails_with_a_reason(user, settings, django_capture_on_commit_callbacks):
    settings.KYBERNESIS_JOB_MAX_RECOVERIES = 2
    job = UploadJobFactory(owner=user, recoveries=2)
    _stall(job, status=UploadJob.Status.PROCESSING, minutes_ago=60)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert jobs.jobs_recover_stalled()["failed"] == 1
    assert callbacks == [], "not queued again"
    job.refresh_from_db()
    assert job.status == UploadJob.Status.FAILED
    assert "worker stopped 3 times" in job.error


def test_two_sweeps_at_once_recover_a_job_once(user, django_capture_on_commit_callbacks):
    job = ImportJobFactory(owner=user)
    _stall(job, status=ImportJob.Status.RUNNING, minutes_ago=30)
    seen = ImportJob.objects.values_list("status", "updated_at", "recoveries").get(pk=job.pk)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        first = jobs._recover(ImportJob, job.pk, *seen, now=timezone.now(), enqueue=lambda pk: None)
        second = jobs._recover(ImportJob, job.pk, *seen, now=timezone.now(), enqueue=lambda pk: None)
    assert (first, second) == ("requeued", None)
    assert len(callbacks) == 1
    assert ImportJob.objects.get(pk=job.pk).recoveries == 1


def test_the_sweep_is_scheduled():
    jobs.jobs_schedule_ensure()
    schedule = Schedule.objects.get(name=jobs.SCHEDULE_NAME)
    assert schedule.func == "memories.tasks.jobs_recover" and schedule.minutes == 5


def test_migrate_keeps_both_memories_schedules(db):
    """Two schedules hang off the memories app's post_migrate; neither may replace the other."""
    from django.core.management import call_command

    Schedule.objects.all().delete()
    call_command("migrate", "memories", verbosity=0)
    names = set(Schedule.objects.values_list("name", flat=True))
    assert jobs.SCHEDULE_NAME in names
    assert any(name.startswith("memories: remove originals") for name in names)
