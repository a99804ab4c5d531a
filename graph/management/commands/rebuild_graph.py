"""Rebuild the knowledge graph (entities, relationships, memory links) of one user or of everyone."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.selectors import user_find
from graph.services import graph_rebuild


class Command(BaseCommand):
    help = "Re-extract entities and relationships from every memory and refresh memory links."

    def add_arguments(self, parser):
        parser.add_argument("--user", help="username, email or id; default: every user with memories")
        parser.add_argument("--batch-size", type=int, default=200)

    def handle(self, *args, user: str | None, batch_size: int, **options):
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        if user:
            found = user_find(user, by_id=True)
            if found is None:
                raise CommandError(f"no user {user!r}")
            users = [found]
        else:
            users = get_user_model().objects.filter(memories__isnull=False).distinct().order_by("pk")
        results = {}
        for owner in users:
            result = graph_rebuild(owner=owner, batch_size=batch_size)
            results[owner.get_username()] = result
            self.stdout.write(
                f"{owner.get_username()}: {result['memories']} memories, "
                f"{result.get('mentions', 0)} mentions, {result.get('relationships', 0)} relationships"
            )
        self.stdout.write(json.dumps(results))
