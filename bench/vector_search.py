"""The `--vector-search` option of the search benchmarks (measure the path the product picks for an
owner, or force exact search or the HNSW index for this process), and the recall of the HNSW index
against exact nearest neighbours."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from memories import embedding
from memories.models import ACTIVE_TIERS
from memories.search.filters import tier_condition
from memories.search.statement import exact_for

CHOICES = ("auto", "exact", "index")


def add_argument(parser) -> None:
    parser.add_argument(
        "--vector-search",
        choices=CHOICES,
        default="auto",
        help="how vector candidates are found: as the product decides (KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS), "
        "always exactly, or always through the HNSW index",
    )


def apply(choice: str) -> None:
    """Force the choice in this process only (the setting the product reads per search)."""
    if choice != "auto":
        settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS = 2**62 if choice == "exact" else 0


def used_for(owner_id: int) -> str:
    return "exact" if exact_for(owner_id) else "index"


@contextmanager
def overridden(**values):
    """Settings the search reads per call, changed for the block (this process only)."""
    before = {name: getattr(settings, name) for name in values}
    for name, value in values.items():
        setattr(settings, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(settings, name, value)


def active_vectors(owner_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids, embeddings) of the owner's hot and warm chunks of the current model: what the
    active HNSW index holds of this owner. Read over binary protocol with pgvector's loader, in
    batches, so a million vectors arrive as float32 arrays rather than text to parse."""
    from pgvector.psycopg import register_vector

    ids: list[int] = []
    vectors: list[np.ndarray] = []
    with transaction.atomic():
        connection.ensure_connection()
        raw = connection.connection
        register_vector(raw)
        with raw.cursor(name="bench_vectors", binary=True) as cursor:
            cursor.itersize = 20_000
            cursor.execute(
                "SELECT id, embedding FROM memories_memorychunk WHERE owner_id = %s AND tier = ANY(%s) "
                "AND embedding_model = %s",
                [owner_id, list(ACTIVE_TIERS), embedding.model_name()],
            )
            for pk, vector in cursor:
                ids.append(pk)
                vectors.append(vector.to_numpy() if hasattr(vector, "to_numpy") else np.asarray(vector))
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 384), dtype=np.float32)
    return np.asarray(ids, dtype=np.int64), np.vstack(vectors).astype(np.float32)


def exact_nearest(ids: np.ndarray, vectors: np.ndarray, queries: Sequence[np.ndarray], k: int) -> list[list[int]]:
    """The true `k` nearest chunks of each query by cosine (all vectors are unit length), computed
    in memory: the ground truth recall is measured against."""
    out: list[list[int]] = []
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1
    for start in range(0, len(queries), 32):
        block = np.asarray(queries[start : start + 32], dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        scores = (vectors @ block.T) / norms[:, None]
        for column in range(scores.shape[1]):
            top = np.argpartition(-scores[:, column], min(k, len(ids) - 1))[:k]
            top = top[np.argsort(-scores[top, column])]
            out.append(ids[top].tolist())
    return out


def index_nearest(owner_id: int, query: np.ndarray, *, k: int, candidates: int, ef_search: int) -> list[int]:
    """The first `k` of the `candidates` nearest hot and warm chunks through the HNSW index, as the
    search statement's vector side finds them: the same layer condition, ordering, ef_search (at
    least the candidate count) and relaxed iterative scan (memories.search.statement)."""
    literal = "[" + ",".join(f"{x:.7g}" for x in np.asarray(query, dtype=np.float32)) + "]"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"SET LOCAL hnsw.ef_search = {int(max(ef_search, candidates))}; SET LOCAL hnsw.iterative_scan = relaxed_order"
        )
        cursor.execute(
            f"SELECT c.id FROM memories_memorychunk c WHERE c.owner_id = %s AND {tier_condition(ACTIVE_TIERS)} "
            "AND c.embedding_model = %s ORDER BY c.embedding <=> %s::vector LIMIT %s",
            [owner_id, embedding.model_name(), literal, candidates],
        )
        return [row[0] for row in cursor.fetchall()][:k]


def recall_at(found: Sequence[Sequence[int]], truth: Sequence[Sequence[int]], k: int) -> float:
    """Mean share of each query's true top `k` that was found in its first `k`."""
    if not truth:
        return 0.0
    shares = [len(set(f[:k]) & set(t[:k])) / max(1, min(k, len(t))) for f, t in zip(found, truth, strict=True)]
    return round(float(np.mean(shares)), 4)
