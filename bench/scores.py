"""Per-query score records the retrieval benchmarks can write (`--scores PATH`) for the relevance
calibration (`manage.py bench_calibrate`): every result's scores and grade, and the query's
background score in its collection."""

from __future__ import annotations

import json
from pathlib import Path

from django.db import connection

from memories import embedding


def background_score(owner_id: int, qvec) -> float:
    """The query's background in the owner's collection: its mean cosine similarity to their chunks
    (of the current model), the inner product with the chunks' mean vector (embeddings are unit length)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT -(avg(embedding) <#> %s::vector) FROM memories_memorychunk "
            "WHERE owner_id = %s AND embedding_model = %s",
            [embedding.vector_literal(qvec), owner_id, embedding.model_name()],
        )
        row = cursor.fetchone()
    return float(row[0]) if row and row[0] is not None else 0.0


class ScoreRecorder:
    """Appends one JSON line per query: its set, id, type, background and its results, each as
    [hybrid, vector, metadata, grade, share of the query's IDF the result contains]."""

    def __init__(self, path: str | None, *, data_set: str, append: bool = False):
        self.data_set = data_set
        # Open for the whole run, one line per query; close() ends it.
        self.handle = Path(path).open("a" if append else "w", encoding="utf-8") if path else None  # noqa: SIM115

    def record(self, *, owner, query_id: str, query_type: str, text: str, qvec, results, grades: list[int]) -> None:
        """`results` are SearchResults (best first, unfloored); `grades` their relevance (0: not)."""
        if self.handle is None:
            return
        row = {
            "set": self.data_set,
            "owner": owner.get_username(),
            "id": query_id,
            "type": query_type,
            "text": text,
            "background": round(background_score(owner.pk, qvec), 4),
            "results": [
                [
                    round(r.hybrid_score, 4),
                    round(r.vector_score, 4),
                    round(r.metadata_score, 4),
                    grade,
                    round(r.parts.get("idfShare", 0.0), 4),
                ]
                for r, grade in zip(results, grades, strict=True)
            ],
        }
        self.handle.write(json.dumps(row) + "\n")

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
