"""Re-embedding stale chunks: those whose stored embedding key is not the key their text has today.

A chunk goes stale when the model or the backend changes (KYBERNESIS_EMBEDDING_MODEL,
KYBERNESIS_EMBEDDING_BACKEND) or when the text a chunk is embedded as changes
(memories.embedding.chunk_embedding_text). Work goes in id order, one transaction per batch, so an
interrupted run loses at most one batch and the next run resumes: chunks already done have the
current key and are skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection, transaction

from memories import embedding
from memories.models import MemoryChunk


@dataclass
class ReembedProgress:
    scanned: int = 0
    stale: int = 0
    reembedded: int = 0
    skipped: int = 0  # changed or deleted meanwhile: left to the write that changed them
    last_id: int = 0
    seconds: float = 0.0


def chunks_stale_count(*, owner_id: int | None = None) -> tuple[int, int]:
    """(stale chunks, all chunks), computed over every chunk's key."""
    stale = total = 0
    for batch in _scan(owner_id=owner_id, after=0, batch_size=2000):
        total += len(batch)
        stale += sum(1 for row in batch if row[4] != row[5])
    return stale, total


def _scan(*, owner_id: int | None, after: int, batch_size: int):
    """Batches of (id, text, title, model, stored key, expected key), in id order after `after`."""
    model_id = embedding.backend_id()
    while True:
        chunks = MemoryChunk.objects.filter(pk__gt=after).order_by("pk")
        if owner_id is not None:
            chunks = chunks.filter(owner_id=owner_id)
        rows = list(chunks.values_list("pk", "text", "memory__title", "embedding_model", "embedding_key")[:batch_size])
        if not rows:
            return
        after = rows[-1][0]
        yield [
            (
                pk,
                text,
                title,
                model,
                key,
                embedding.embedding_key(embedding.chunk_embedding_text(title, text), model_id=model_id),
            )
            for pk, text, title, model, key in rows
        ]


def chunks_reembed(
    *,
    batch_size: int = 256,
    limit: int | None = None,
    owner_id: int | None = None,
    after: int = 0,
    on_batch: Callable[[ReembedProgress], None] | None = None,
) -> ReembedProgress:
    """Embed every stale chunk again with the current model and backend, batch by batch."""
    progress = ReembedProgress(last_id=after)
    started = time.perf_counter()
    model = embedding.model_name()
    for batch in _scan(owner_id=owner_id, after=after, batch_size=batch_size):
        progress.scanned += len(batch)
        stale = [row for row in batch if row[4] != row[5]]
        if limit is not None:
            stale = stale[: max(0, limit - progress.stale)]
        progress.stale += len(stale)
        if stale:
            vectors = embedding.embed_texts(
                [embedding.chunk_embedding_text(title, text) for _pk, text, title, *_ in stale]
            )
            with transaction.atomic(), connection.cursor() as cursor:
                # Only where the chunk still has the key we read: a concurrent edit wins.
                cursor.execute(
                    """
                    UPDATE memories_memorychunk c
                    SET embedding = v.embedding::vector, embedding_model = %s, embedding_key = v.new_key
                    FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[])
                         AS v(id, embedding, old_key, new_key)
                    WHERE c.id = v.id AND c.embedding_key = v.old_key
                    """,
                    [
                        model,
                        [row[0] for row in stale],
                        [embedding.vector_literal(v) for v in vectors],
                        [row[4] for row in stale],
                        [row[5] for row in stale],
                    ],
                )
                updated = cursor.rowcount
            progress.reembedded += updated
            progress.skipped += len(stale) - updated
        progress.last_id = batch[-1][0]
        progress.seconds = time.perf_counter() - started
        if on_batch is not None:
            on_batch(progress)
        if limit is not None and progress.stale >= limit:
            break
    progress.seconds = time.perf_counter() - started
    return progress
