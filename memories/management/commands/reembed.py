"""Re-embed the chunks whose embedded text (title context + chunk text) is not what their vector was
computed from. Resumable: a finished chunk's `embedded_hash` matches, so a rerun skips it."""

from __future__ import annotations

import json
import time

from django.core.management.base import BaseCommand
from django.db import transaction

from memories import embedding
from memories.models import MemoryChunk


class Command(BaseCommand):
    help = "Re-embed chunks whose title context or text changed since they were embedded (resumable)."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=256, help="chunks embedded and saved per step")
        parser.add_argument("--dry-run", action="store_true", help="only count the chunks that need it")

    def handle(self, *args, batch: int, dry_run: bool, **options):
        started = time.perf_counter()
        total = MemoryChunk.objects.count()
        seen = redone = 0
        last_id = 0
        while True:
            rows = list(MemoryChunk.objects.filter(pk__gt=last_id).order_by("pk")
                        .values_list("pk", "text", "embedded_hash", "memory__title")[:batch * 4])
            if not rows:
                break
            last_id = rows[-1][0]
            seen += len(rows)
            stale = []
            for pk, text, embedded_hash, title in rows:
                wanted = embedding.chunk_embedding_text(title, text)
                digest = embedding.embedded_text_hash(wanted)
                if digest != embedded_hash:
                    stale.append((pk, wanted, digest))
            for start in range(0, len(stale), batch):
                part = stale[start:start + batch]
                if not dry_run:
                    vectors = embedding.embed_texts([text for _, text, _ in part])
                    with transaction.atomic():
                        MemoryChunk.objects.bulk_update(
                            [MemoryChunk(pk=pk, embedding=vector, embedded_hash=digest)
                             for (pk, _, digest), vector in zip(part, vectors, strict=True)],
                            ["embedding", "embedded_hash"])
                redone += len(part)
            self.stderr.write(f"\rchecked {seen:,}/{total:,} chunks, re-embedded {redone:,}", ending="")
        self.stderr.write("")
        self.stdout.write(json.dumps({"chunks": seen, "reembedded" if not dry_run else "stale": redone,
                                      "seconds": round(time.perf_counter() - started, 1)}))
