"""Start a sleep cycle: over one user's memories (--user) or everyone's; --wait runs it here and reports."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from core.selectors import user_find
from sleep.models import SleepRun
from sleep.pipeline import sleep_run_execute, sleep_run_request


class Command(BaseCommand):
    help = "Start a sleep cycle (tag, link, tier, summarize). The last line is the run as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--user", help="username or email; default: every user's memories")
        parser.add_argument("--wait", action="store_true", help="run the cycle in this process and wait for it")

    def handle(self, *args, user=None, wait=False, **options):
        owner = None
        if user:
            owner = user_find(user)
            if owner is None:
                raise CommandError(f"no user '{user}'")
        run, created = sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=owner)
        self.stderr.write(f"sleep run {run.pk} {'queued' if created else 'already active'}")
        if wait:
            if sleep_run_execute(run_id=run.pk) is None:
                raise CommandError("another worker is running a sleep cycle; try again when it ends")
            run.refresh_from_db()
        steps = {s.step: {"status": s.status, **s.metrics} for s in run.steps.order_by("position")}
        self.stdout.write(
            json.dumps(
                {
                    "id": run.pk,
                    "status": run.status,
                    "tasksCompleted": run.tasks_completed,
                    "tasksFailed": run.tasks_failed,
                    "durationSeconds": run.duration_seconds,
                    "steps": steps,
                }
            )
        )
