"""`manage.py import_memories --user U PATH`: import an export zip, a .jsonl, Markdown notes (a folder or zip)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portability import services
from portability.management.commands.export_memories import find_user


class Command(BaseCommand):
    help = (
        "Import into a user's account: a Kybernesis export (.zip or its memories.jsonl) or Markdown notes "
        "(an Obsidian vault folder or zip). Prints progress on stderr and the report as JSON on the last line."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The zip, .jsonl, .md file or folder of notes.")
        parser.add_argument("--user", required=True, help="Username or email address.")

    def handle(self, *args, path: str, user: str, **options):
        owner = find_user(user)
        source = Path(path)
        if not source.exists():
            raise CommandError(f"{path} does not exist")

        def progress(report):
            total = f"/{report.total}" if report.total is not None else ""
            self.stderr.write(
                f"{report.processed}{total} read: {report.created} created, "
                f"{report.duplicates} duplicates, {report.failed} failed"
            )

        report = services.import_path(owner=owner, path=source, progress=progress)
        for error in report.errors:
            self.stderr.write(f"  {error['item']}: {error['error']}")
        if report.error:
            self.stderr.write(f"import stopped: {report.error}")
        self.stdout.write(json.dumps(report.as_dict()))
        if report.error and not report.created:
            raise CommandError(report.error)
