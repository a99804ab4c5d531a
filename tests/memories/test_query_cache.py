"""embed_query keeps a short, bounded cache of query vectors keyed by model, backend and text."""

from __future__ import annotations

import numpy as np
import pytest

from memories import embedding


@pytest.fixture
def counted(monkeypatch):
    embedding.reset()
    calls = []
    real = embedding.embed_texts

    def counting(texts, **kwargs):
        calls.append(list(texts))
        return real(texts, **kwargs)

    monkeypatch.setattr(embedding, "embed_texts", counting)
    yield calls
    embedding.reset()


def test_a_repeated_query_is_embedded_once_and_gives_the_same_vector(counted):
    first = embedding.embed_query("where did I park")
    first[0] = 99.0  # a caller changing its copy does not change the cache
    second = embedding.embed_query("where did I park")
    assert counted == [["where did I park"]]
    np.testing.assert_allclose(second, embedding.embed_texts(["where did I park"])[0])
    assert second[0] != 99.0


def test_the_cache_can_be_bypassed_or_turned_off(counted, settings):
    embedding.embed_query("q", cache=False)
    embedding.embed_query("q", cache=False)
    assert len(counted) == 2
    settings.KYBERNESIS_QUERY_CACHE_SIZE = 0
    embedding.embed_query("r")
    embedding.embed_query("r")
    assert len(counted) == 4


def test_the_cache_is_bounded_and_forgets_the_least_recently_used(counted, settings):
    settings.KYBERNESIS_QUERY_CACHE_SIZE = 2
    for text in ("a", "b", "a", "c"):  # "b" is the least recently used when "c" arrives
        embedding.embed_query(text)
    assert len(embedding._query_cache) == 2
    counted.clear()
    embedding.embed_query("a")
    embedding.embed_query("c")
    assert counted == []
    embedding.embed_query("b")
    assert counted == [["b"]]
