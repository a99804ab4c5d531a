"""A deterministic stand-in for the sentence-transformers model, for unit tests.

It hashes words and word pairs into 384 signed buckets and normalises the sum, so the same text
always gives the same vector, texts sharing words are close and unrelated texts are near
orthogonal. It knows nothing of meaning (synonyms, paraphrase): tests of retrieval quality, of
semantic links and the browser tests use the real model (`@pytest.mark.real_embedder`).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import numpy as np

from memories.embedding import EMBEDDING_DIMENSIONS

_WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=65536)
def _bucket(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % EMBEDDING_DIMENSIONS, 1.0 if (value >> 32) & 1 else -1.0


def fake_vector(text: str) -> np.ndarray:
    words = [w.lower() for w in _WORD.findall(text)]
    vector = np.zeros(EMBEDDING_DIMENSIONS, dtype=np.float32)
    for feature, weight in [*((w, 1.0) for w in words), *((f"{a} {b}", 0.5) for a, b in zip(words, words[1:]))]:
        index, sign = _bucket(feature)
        vector[index] += sign * weight
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        # Text without words (empty, punctuation, emoji) still gets a valid unit vector.
        vector[0] = 1.0
        return vector
    return vector / norm


class FakeEmbeddingModel:
    """Answers the part of SentenceTransformer's interface that memories.embedding uses."""

    def get_sentence_embedding_dimension(self) -> int:
        return EMBEDDING_DIMENSIONS

    get_embedding_dimension = get_sentence_embedding_dimension

    def encode(
        self, sentences, *, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    ):
        if not sentences:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        return np.stack([fake_vector(text) for text in sentences])


FAKE_MODEL = FakeEmbeddingModel()
