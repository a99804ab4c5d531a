"""`manage.py export_memories --user U`: write a user's whole memory as the export zip."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from portability import services


def find_user(name: str):
    user = get_user_model().objects.filter(Q(username=name) | Q(email__iexact=name)).order_by("pk").first()
    if user is None:
        raise CommandError(f"no user {name!r}")
    return user


class Command(BaseCommand):
    help = "Export a user's memories, chat sessions and manifest as a zip (streamed to the file)."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="Username or email address.")
        parser.add_argument("--output", "-o", help="The zip to write (default: kybernesis-export-<id>-<time>.zip).")
        parser.add_argument(
            "--no-vectors",
            action="store_true",
            help="Leave the chunk embeddings out (smaller; an import then embeds again).",
        )

    def handle(self, *args, user: str, output: str | None, no_vectors: bool, **options):
        owner = find_user(user)
        path = Path(output or services.export_filename(owner))
        size = services.export_to_file(owner=owner, path=path, vectors=not no_vectors)
        self.stdout.write(json.dumps({"file": str(path), "bytes": size}))
