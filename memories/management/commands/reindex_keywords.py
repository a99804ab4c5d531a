"""Rebuild accounts' keyword (BM25) index from their chunks and titles, each account in one transaction."""

from __future__ import annotations

import json
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memories.models import Memory
from memories.search import lexical


class Command(BaseCommand):
    help = (
        "Rebuild the keyword index of every account (or of --user), each in one transaction: after an upgrade "
        "of PostgreSQL that brings a language's text search config, or to repair an index. Searches keep "
        "working meanwhile and see the old index until an account's rebuild commits."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", action="append", default=None, help="a username (repeat for several)")

    def handle(self, *args, user, **options):
        users = get_user_model().objects.order_by("pk")
        if user:
            found = dict(users.filter(username__in=user).values_list("username", "pk"))
            if missing := sorted(set(user) - set(found)):
                raise CommandError(f"no such user: {', '.join(missing)}")
            owners = [found[name] for name in user]
        else:
            owners = list(Memory.all_objects.order_by().values_list("owner_id", flat=True).distinct())
        started = time.perf_counter()
        for owner_id in owners:
            with transaction.atomic():
                lexical.reindex_owner(owner_id)
        self.stdout.write(json.dumps({"accounts": len(owners), "seconds": round(time.perf_counter() - started, 2)}))
