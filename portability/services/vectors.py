"""Chunk vectors in an export: which model made them, how they are written, and whether an import may
store them as this instance's own."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np

from memories import embedding


def embedding_model_id() -> str:
    # The weights and the backend: int8 vectors are not reused as fp32 ones, nor the reverse.
    return embedding.backend_id()


def vector_b64(vector) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


@dataclass(frozen=True)
class VectorReuse:
    """Whether an exported chunk vector may be stored as this instance's own, so that search never
    compares vectors of two models. A chunk exported with its `embeddingKey` is reused only when that
    key is the one this instance would give the same text under the same title (same model, backend
    and embedded text), whatever the manifest says; a chunk without one (older exports) only when the
    manifest names this instance's model and backend."""

    included: bool  # the export carries vectors of the right dimension
    model_matches: bool  # its manifest names this instance's model and backend

    def reusable(self, exported: tuple[np.ndarray, str | None] | None, title: str, text: str) -> np.ndarray | None:
        if exported is None:
            return None
        vector, key = exported
        if key is None:
            return vector if self.model_matches else None
        return vector if key == embedding.embedding_key(embedding.chunk_embedding_text(title, text)) else None
