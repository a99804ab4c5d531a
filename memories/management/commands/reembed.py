"""Embed stale chunks again (model, backend or embedded text changed), with progress; safe to stop and rerun."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from memories import embedding
from memories.services.reembed import chunks_reembed, chunks_stale_count


class Command(BaseCommand):
    help = (
        "Re-embed every chunk whose embedding key is not current (another model, backend or embedded "
        "text). Each batch commits on its own; an interrupted run resumes where it stopped when run again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--limit", type=int, default=None, help="stop after this many stale chunks")
        parser.add_argument("--user", type=int, default=None, help="only this owner's chunks (user id)")
        parser.add_argument("--dry-run", action="store_true", help="only count the stale chunks")

    def handle(self, *args, batch_size, limit, user, dry_run, **options):
        if batch_size < 1 or (limit is not None and limit < 1):
            raise CommandError("--batch-size and --limit must be positive")
        model_id = embedding.backend_id()
        stale, total = chunks_stale_count(owner_id=user)
        self.stderr.write(f"{stale} of {total} chunks are stale for {model_id}")
        if dry_run or not stale:
            self.stdout.write(json.dumps({"model": model_id, "chunks": total, "stale": stale, "reembedded": 0}))
            return
        goal = min(stale, limit) if limit else stale

        def report(progress):
            rate = progress.reembedded / progress.seconds if progress.seconds else 0.0
            self.stderr.write(
                f"  {progress.reembedded}/{goal} re-embedded ({rate:.1f} chunks/s), up to chunk id {progress.last_id}"
            )

        progress = chunks_reembed(batch_size=batch_size, limit=limit, owner_id=user, on_batch=report)
        self.stdout.write(
            json.dumps(
                {
                    "model": model_id,
                    "chunks": total,
                    "stale": stale,
                    "reembedded": progress.reembedded,
                    "skipped": progress.skipped,
                    "seconds": round(progress.seconds, 2),
                }
            )
        )
