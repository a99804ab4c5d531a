"""Deterministic synthetic text for benchmarks: realistic English-like prose from a fixed vocabulary."""

from __future__ import annotations

import random

VOCABULARY = """
account action agreement analysis answer approach area argument article audience author balance bank basis
behaviour benefit board boundary budget building business campaign capacity capital career category cause
challenge change character choice claim client climate code colleague comment committee community company
comparison competition component concept condition conference connection consequence context contract control
conversation cost council country course coverage credit culture customer cycle data database deadline debate
decision definition delivery demand department deployment design detail development device difference director
discussion distribution document economy edge effect effort element energy engine engineer environment error
estimate evaluation event evidence example exchange experience experiment expert factor feature feedback field
figure file finance focus forecast format foundation framework function funding future goal government graph
group growth guidance habit hardware health history hypothesis idea impact implementation improvement incident
index industry information infrastructure initiative input insight instance interface interview investment issue
item journey judgment knowledge language layer leader learning level library license limit list location logic
machine maintenance management manager market material measure media meeting memory message method metric
migration milestone model module moment money monitor network note number objective operation opinion option
order organization outcome output owner package page paper partner pattern payment performance period person
phase pipeline plan platform policy portfolio position practice prediction preference pressure price priority
problem procedure process product profile program progress project proposal protocol quality quarter query
question range rate reason record recovery region release report request requirement research resource response
result retention revenue review risk roadmap role rule safety sample scale schedule scope score search season
section security segment sensor sequence server service session signal situation software solution source
space speed sprint staff stage standard statement strategy stream structure study subject success summary
supply support survey system table target task team technology template term test theory thread threshold
ticket timeline tool topic total traffic training transaction transfer trend trial update usage user value
vendor version view vision volume warehouse week workflow workload
""".split()
VERBS = """improves reduces supports requires explains tracks describes changes measures affects delivers
replaces extends connects reviews limits predicts compares updates protects""".split()
ADJECTIVES = """new current critical stable internal external quarterly weekly shared remote manual automatic
detailed rough final early late primary secondary regional global local""".split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(ADJECTIVES), rng.choice(VOCABULARY), rng.choice(VERBS), "the"]
    words += [rng.choice(VOCABULARY if rng.random() < 0.8 else ADJECTIVES) for _ in range(rng.randint(4, 14))]
    return " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"])


def document(rng: random.Random, *, target_chars: int = 3000) -> str:
    paragraphs: list[str] = []
    size = 0
    while size < target_chars:
        paragraph = " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)[: target_chars + 400]


# --- A corpus for the scale benchmark: clustered vectors and Zipf-distributed words -------------------
#
# Uniform random unit vectors make a poor benchmark of an approximate index: in 384 dimensions every
# pair is nearly orthogonal, so a query has no true neighbours to find and recall means nothing.
# Real sentence embeddings sit on a few dozen dominant directions, around a shared mean, in topic
# clusters. The generator below has the same shape, and its figures were matched to the product's
# own model on real text (3,000 SciFact abstracts embedded by the packaged ONNX model; the
# comparison is in docs/scaling.md): mean cosine between random pairs 0.15 (real 0.15), nearest
# neighbour 0.67 (0.66), half the variance in ~21 principal directions (31), 80% in ~112 (107).
#
# The text side follows Zipf's law, as every natural language does: a word's frequency falls with
# its rank (Zipf–Mandelbrot). Function words hold the top ranks (so stop-word removal
# takes out about 40% of the tokens, as in English prose), then the content vocabulary above, then a
# long tail of generated words, so the keyword postings have a few huge lists and many short ones.
# Each topic also has its own words, used more often by its chunks and by queries about it, so the
# lexical and vector sides of a search agree about what a chunk is about, as they do for real text.

EMBEDDING_DIM = 384
TOPICS = 2000
SPECTRUM_DECAY = 0.95  # variance of the i-th direction ∝ i^-decay
MEAN_SHARE = 0.42  # weight of the shared mean direction, relative to the rest of a vector
CHUNK_SPREAD = 0.75  # a chunk's distance from its topic's centre, relative to the centres' spread
QUERY_SPREAD = 1.0  # a query is a new point of its topic, a little further out (real queries are shorter)
VOCABULARY_SIZE = 50_000
# Fitted to two facts of English prose, not to the benchmark: function words are 40-50% of its
# tokens, and a 1,200-character passage has about 90 distinct lexemes once they are dropped
# (memories.search.lexical). At 1.15 they are 42% and 88.
ZIPF_EXPONENT = 1.15
ZIPF_SHIFT = 2.7  # Mandelbrot's offset: the head is flatter than a pure power law
TOPIC_WORDS = 40
TOPIC_WORD_SHARE = 0.12  # share of a chunk's tokens drawn from its topic's words
FUNCTION_WORDS = """the of and to a in is that for it as with was on be by this are at from or an have not
which but they their been has were can more we will its also one all these other such there than into
may our when some only over most would about what could so if do between after each many those both""".split()
_ONSETS = "b c d f g h j k l m n p r s t v w z br cl dr fl gr pl pr sk sl sp st tr".split()
_NUCLEI = "a e i o u ai ea ou io".split()
_CODAS = ["", "", "n", "r", "s", "l", "t", "m", "x", "nd", "st"]


def _generated_words(count: int, rng: random.Random, taken: set[str]) -> list[str]:
    """Pronounceable made-up words (two or three syllables), none a real word of the lists above."""
    words: list[str] = []
    seen = set(taken)
    while len(words) < count:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_NUCLEI) for _ in range(rng.choice((2, 2, 3))))
        word += rng.choice(_CODAS)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Corpus:
    """A deterministic synthetic corpus: `chunks(n)` yields (texts, unit vectors) batches and
    `queries(n)` gives query texts and vectors drawn from the same topics. The same seed gives the
    same corpus; the topics and vocabulary do not depend on the corpus size, so 10k, 100k and 1M
    chunks are samples of one distribution. Another `stream` of the same seed draws other points of
    the same topics (the queries of a corpus)."""

    def __init__(self, seed: int, *, stream: int = 0, topics: int = TOPICS, vocabulary: int = VOCABULARY_SIZE):
        import numpy as np

        self._np = np
        self.rng = np.random.default_rng(seed)
        words_rng = random.Random(seed)
        content = list(dict.fromkeys(VOCABULARY + VERBS + ADJECTIVES))
        words_rng.shuffle(content)
        known = FUNCTION_WORDS + content
        self.words = np.array(known + _generated_words(vocabulary - len(known), words_rng, set(known)), dtype=object)
        ranks = np.arange(1, len(self.words) + 1, dtype=np.float64)
        weights = (ranks + ZIPF_SHIFT) ** -ZIPF_EXPONENT
        self._cdf = np.cumsum(weights) / weights.sum()
        # Each topic's own words: mid-frequency content words (a topic is not about "the").
        first = len(FUNCTION_WORDS)
        self.topic_words = self.rng.integers(first, min(len(self.words), 20_000), size=(topics, TOPIC_WORDS))
        self._scale = np.arange(1, EMBEDDING_DIM + 1, dtype=np.float64) ** (-SPECTRUM_DECAY / 2)
        mean = self.rng.normal(size=EMBEDDING_DIM)
        self._mean = mean / np.linalg.norm(mean)
        self._mean_weight = MEAN_SHARE * float(np.sqrt((self._scale**2).sum() * (1 + CHUNK_SPREAD**2)))
        self.centres = self.rng.normal(size=(topics, EMBEDDING_DIM)) * self._scale
        # Draws after the topics come from `stream`: the same topics, other chunks (or queries).
        self.rng = np.random.default_rng([seed, stream])

    def _vectors(self, topics, spread: float):
        np = self._np
        points = self._mean_weight * self._mean + self.centres[topics]
        points = points + spread * self.rng.normal(size=(len(topics), EMBEDDING_DIM)) * self._scale
        points /= np.linalg.norm(points, axis=1, keepdims=True)
        return points.astype(np.float32)

    def _tokens(self, topic: int, count: int, topic_share: float) -> str:
        np = self._np
        picks = np.searchsorted(self._cdf, self.rng.random(count))
        own = self.rng.random(count) < topic_share
        if own.any():
            # Within a topic's list the first words are its most characteristic (Zipf again).
            which = np.minimum((self.rng.pareto(1.2, int(own.sum()))).astype(int), TOPIC_WORDS - 1)
            picks[own] = self.topic_words[topic][which]
        return " ".join(self.words[picks])

    def _chunk_lengths(self, n: int):
        """Tokens per chunk: most are full chunks (170-200 tokens, about 1,100 characters, the
        chunker's size), three in ten are short notes and messages (20-80)."""
        np = self._np
        full = self.rng.integers(170, 201, n)
        short = self.rng.integers(20, 81, n)
        return np.where(self.rng.random(n) < 0.3, short, full)

    def chunks(self, n: int, *, per_memory: int = 1, batch: int = 10_000):
        """(titles, texts, vectors) batches totalling `n` chunks, `per_memory` consecutive chunks to a
        memory (one title each): a memory's chunks share its topic, as a document's passages do."""
        batch -= batch % per_memory
        for start in range(0, n, batch):
            size = min(batch, n - start)
            memory_topics = self.rng.integers(0, len(self.centres), -(-size // per_memory))
            topics = self._np.repeat(memory_topics, per_memory)[:size]
            lengths = self._chunk_lengths(size)
            texts = [
                self._tokens(int(t), int(k), TOPIC_WORD_SHARE).capitalize() + "."
                for t, k in zip(topics, lengths, strict=True)
            ]
            yield [self.title(int(t)) for t in memory_topics], texts, self._vectors(topics, CHUNK_SPREAD)

    def title(self, topic: int | None = None) -> str:
        topic = int(self.rng.integers(0, len(self.centres))) if topic is None else topic
        return self._tokens(topic, int(self.rng.integers(3, 9)), 0.5).capitalize()

    def queries(self, n: int) -> tuple[list[str], list]:
        """Query texts (two to six words, mostly the topic's own) and vectors, a new point of the
        same topic each: what a person asks about something the collection holds."""
        topics = self.rng.integers(0, len(self.centres), n)
        texts = [self._tokens(int(t), int(self.rng.integers(2, 7)), 0.6) for t in topics]
        return texts, list(self._vectors(topics, QUERY_SPREAD))
