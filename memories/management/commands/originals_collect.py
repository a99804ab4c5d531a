"""Remove kept originals that no memory references (a write that rolled back, an expired bulk-delete undo)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from memories.services.originals import ORPHAN_GRACE_SECONDS, originals_collect


class Command(BaseCommand):
    help = (
        "Remove files in KYBERNESIS_ORIGINALS_DIR that no memory references and that are older than the grace "
        "period (a day by default), and temp files left by an interrupted write. The worker runs it hourly."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--grace-hours",
            type=float,
            default=ORPHAN_GRACE_SECONDS / 3600,
            help="leave unreferenced files younger than this alone (a running write, an undo still possible)",
        )

    def handle(self, *args, grace_hours, **options):
        if grace_hours < 0:
            raise CommandError("--grace-hours must not be negative")
        removed = originals_collect(grace_seconds=int(grace_hours * 3600))
        self.stdout.write(json.dumps({"removed": removed}))
