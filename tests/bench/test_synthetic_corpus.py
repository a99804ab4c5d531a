"""The scale benchmark's synthetic corpus: deterministic, clustered like real embeddings, Zipf words."""

from __future__ import annotations

from collections import Counter

import numpy as np

from bench import synthetic
from bench.synthetic import Corpus
from bench.vector_search import exact_nearest, recall_at


def _batch(seed: int, n: int = 800, stream: int = 0):
    return next(Corpus(seed, stream=stream).chunks(n, per_memory=4, batch=n))


def test_the_same_seed_gives_the_same_corpus_and_another_stream_other_points():
    titles, texts, vectors = _batch(5)
    again = _batch(5)
    assert titles == again[0] and texts == again[1] and np.array_equal(vectors, again[2])
    other = _batch(5, stream=1)
    assert other[1] != texts
    assert len(titles) == 200 and len(texts) == 800 and vectors.shape == (800, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


def test_vectors_have_topic_structure_not_uniform_noise():
    """A chunk's nearest neighbour is far closer than a random pair (uniform random unit vectors in
    384 dimensions are all nearly orthogonal, so neither would be), and a query's true neighbours
    are mostly chunks of its topic."""
    _, _, vectors = _batch(7, n=2000)
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -1)
    random_pairs = similarity[np.triu_indices(len(vectors), 1)].mean()
    nearest = similarity.max(axis=1).mean()
    assert 0.05 < random_pairs < 0.3
    assert nearest > random_pairs + 0.3
    uniform = np.random.default_rng(0).normal(size=(2000, 384))
    uniform /= np.linalg.norm(uniform, axis=1, keepdims=True)
    uniform_similarity = uniform @ uniform.T
    np.fill_diagonal(uniform_similarity, -1)
    assert uniform_similarity.max(axis=1).mean() < nearest - 0.3


def test_words_follow_zipf_and_queries_use_their_topic_words():
    _, texts, _ = _batch(3, n=2000)
    counts = Counter(word for text in texts for word in text.lower().rstrip(".").split())
    ranked = [count for _, count in counts.most_common()]
    # Frequency falls with rank: the 10th word is far more frequent than the 1,000th.
    assert ranked[9] > 20 * ranked[999]
    tokens = sum(ranked)
    function_share = sum(counts[w] for w in synthetic.FUNCTION_WORDS) / tokens
    assert 0.35 < function_share < 0.55
    query_texts, query_vectors = Corpus(3, stream=1).queries(20)
    assert all(2 <= len(text.split()) <= 6 for text in query_texts)
    assert len(query_vectors) == 20 and query_vectors[0].shape == (384,)


def test_exact_nearest_and_recall():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(1000, 1300)
    queries = [vectors[5], vectors[17]]
    truth = exact_nearest(ids, vectors, queries, 10)
    assert truth[0][0] == 1005 and truth[1][0] == 1017 and len(truth[0]) == 10
    brute = np.argsort(-(vectors @ vectors[5]))[:10] + 1000
    assert truth[0] == brute.tolist()
    assert recall_at(truth, truth, 10) == 1.0
    assert recall_at([[*truth[0][:5], 1, 2, 3, 4, 5]], [truth[0]], 10) == 0.5
