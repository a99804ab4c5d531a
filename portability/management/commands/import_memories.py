"""`manage.py import_memories --user U PATH`: import an export zip, a .jsonl, Markdown notes (a folder or
zip), or a ChatGPT or Claude export (its zip or conversations.json), told apart by their content."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.actors import Actor, acting
from portability import services
from portability.management.commands.export_memories import find_user


class Command(BaseCommand):
    help = (
        "Import into a user's account: a Kybernesis export (.zip or its memories.jsonl), Markdown notes "
        "(an Obsidian vault folder or zip), or a ChatGPT or Claude export (the zip, or conversations.json). "
        "Prints progress on stderr and the report as JSON on the last line."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The zip, conversations.json, .jsonl, .md file or folder of notes.")
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

        with acting(Actor.importer("import from the command line")):
            report = services.import_path(owner=owner, path=source, progress=progress)
        for error in report.errors:
            self.stderr.write(f"  {error['item']}: {error['error']}")
        for notice in report.notices:
            self.stderr.write(notice)
        if report.error:
            self.stderr.write(f"import stopped: {report.error}")
        self.stdout.write(json.dumps(report.as_dict()))
        if report.error and not report.created:
            raise CommandError(report.error)
