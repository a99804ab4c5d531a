"""Build (once) and verify the configured embedding backend, and write the auto-tagger's word list;
`make run` runs it before serving, so the server's processes find both ready (deriving the word list
imports spaCy, which this short-lived process then takes away with it)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from memories import auto_tags, embedding


class Command(BaseCommand):
    help = (
        "Build the ONNX embedding model into KYBERNESIS_EMBEDDING_CACHE_DIR if it is missing or damaged, "
        "check it, and print the backend that serves (torch when the build failed)."
    )

    def handle(self, *args, **options):
        started = time.monotonic()
        embedding.embed_query("warm up")
        active = embedding.backend()
        if active != embedding.configured_backend():
            self.stderr.write(
                f"the {embedding.configured_backend()} backend is unavailable; torch serves instead "
                "(see the warning above)"
            )
        auto_tags.warm_up()
        self.stderr.write(f"embedding model and tagger ready in {time.monotonic() - started:.1f} s")
        self.stdout.write(embedding.backend_id())
