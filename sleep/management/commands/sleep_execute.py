"""Execute one queued sleep run in this process (the scheduled task starts this as its child); JSON last line."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from sleep.models import SleepRun
from sleep.pipeline import sleep_run_execute


class Command(BaseCommand):
    help = "Execute the queued or interrupted sleep run RUN_ID here (and any run queued behind it)."

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int)

    def handle(self, *args, run_id: int, **options):
        if not SleepRun.objects.filter(pk=run_id).exists():
            raise CommandError(f"no sleep run {run_id}")
        run = sleep_run_execute(run_id=run_id)
        if run is None:
            self.stdout.write(json.dumps({"id": run_id, "status": "busy"}))
            return
        self.stdout.write(
            json.dumps(
                {
                    "id": run.pk,
                    "status": run.status,
                    "durationSeconds": run.duration_seconds,
                    "tasksCompleted": run.tasks_completed,
                    "tasksFailed": run.tasks_failed,
                }
            )
        )
