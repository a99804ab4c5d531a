"""Concurrent embedding calls share one model call, and each caller gets its own rows."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memories import embedding, embedding_batcher


class GatedModel:
    """Stands in for embedding.embed_texts: records each call; the first call blocks until released,
    so that callers arriving meanwhile must gather into the next batch."""

    def __init__(self, fail_on: str | None = None):
        self.calls: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail_on = fail_on

    def __call__(self, texts, **kwargs):
        texts = list(texts)
        self.calls.append(texts)
        if len(self.calls) == 1:
            self.started.set()
            assert self.release.wait(10)
        if self.fail_on is not None and self.fail_on in texts:
            raise RuntimeError("the model failed")
        # A vector that names its text: row i is [len(text), first letter code, ...].
        out = np.zeros((len(texts), embedding.EMBEDDING_DIMENSIONS), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i, 0], out[i, 1] = len(text), ord(text[0])
        return out


def _waiting_callers(count: int, timeout: float = 10.0) -> None:
    """Until `count` texts have joined the open batch (the callers are then blocked in it)."""
    for _ in range(int(timeout / 0.005)):
        with embedding_batcher._state_lock:
            batch = embedding_batcher._open
            if batch is not None and len(batch.texts) >= count:
                return
        threading.Event().wait(0.005)
    raise AssertionError(f"{count} texts never joined the open batch")


@pytest.fixture
def gated(monkeypatch, settings):
    settings.KYBERNESIS_EMBED_BATCH_WAIT_MS = 0
    model = GatedModel()
    monkeypatch.setattr(embedding, "embed_texts", model)
    yield model
    model.release.set()


def _start(texts_per_caller, results, errors):
    threads = []
    for key, texts in texts_per_caller.items():

        def run(key=key, texts=texts):
            try:
                results[key] = embedding_batcher.embed_texts(texts)
            except Exception as exc:
                errors[key] = exc

        thread = threading.Thread(target=run)
        thread.start()
        threads.append(thread)
    return threads


def test_callers_arriving_while_the_model_is_busy_share_one_call_and_get_their_own_rows(gated):
    results, errors = {}, {}
    first = _start({"first": ["a first text"]}, results, errors)
    assert gated.started.wait(10)
    later = {"b": ["bb", "bbb"], "c": ["c"], "d": ["dddd"]}
    threads = _start(later, results, errors)
    _waiting_callers(4)
    gated.release.set()
    for thread in first + threads:
        thread.join(10)
    assert not errors
    assert len(gated.calls) == 2  # the lone first call, then one call for the three that waited
    assert sorted(gated.calls[1]) == sorted(["bb", "bbb", "c", "dddd"])
    for key, texts in {"first": ["a first text"], **later}.items():
        assert results[key].shape == (len(texts), embedding.EMBEDDING_DIMENSIONS)
        assert [int(v) for v in results[key][:, 0]] == [len(t) for t in texts]
        assert [chr(int(v)) for v in results[key][:, 1]] == [t[0] for t in texts]


def test_a_failed_call_raises_in_every_caller_of_that_batch_only(monkeypatch, settings):
    settings.KYBERNESIS_EMBED_BATCH_WAIT_MS = 0
    model = GatedModel(fail_on="boom")
    monkeypatch.setattr(embedding, "embed_texts", model)
    results, errors = {}, {}
    first = _start({"first": ["fine"]}, results, errors)
    assert model.started.wait(10)
    threads = _start({"x": ["boom"], "y": ["yes"]}, results, errors)
    _waiting_callers(2)
    model.release.set()
    for thread in first + threads:
        thread.join(10)
    assert set(results) == {"first"}
    assert set(errors) == {"x", "y"}
    assert all(isinstance(e, RuntimeError) for e in errors.values())
    # the next call starts a fresh batch
    assert [int(v) for v in embedding_batcher.embed_texts(["ok"])[:, 0]] == [2]


def test_a_batch_closes_at_its_size_limit(gated, settings):
    settings.KYBERNESIS_EMBED_BATCH_MAX_TEXTS = 3
    results, errors = {}, {}
    first = _start({"first": ["z"]}, results, errors)
    assert gated.started.wait(10)
    threads = _start({"p": ["p1", "p2"]}, results, errors)
    _waiting_callers(2)
    threads += _start({"q": ["q1", "q2"]}, results, errors)  # would make 4: goes to a new batch
    for _ in range(2000):
        with embedding_batcher._state_lock:
            batch = embedding_batcher._open
            if batch is not None and batch.texts == ["q1", "q2"]:
                break
        threading.Event().wait(0.005)
    gated.release.set()
    for thread in first + threads:
        thread.join(10)
    assert not errors
    assert sorted(map(tuple, gated.calls[1:])) == [("p1", "p2"), ("q1", "q2")]
    assert [int(v) for v in results["q"][:, 0]] == [2, 2]


def test_a_lone_caller_and_an_empty_call(settings):
    settings.KYBERNESIS_EMBED_BATCH_WAIT_MS = 1
    vectors = embedding_batcher.embed_texts(["one text", "another"])
    assert vectors.shape == (2, embedding.EMBEDDING_DIMENSIONS)
    np.testing.assert_allclose(vectors, embedding.embed_texts(["one text", "another"]), atol=1e-6)
    assert embedding_batcher.embed_texts([]).shape == (0, embedding.EMBEDDING_DIMENSIONS)
