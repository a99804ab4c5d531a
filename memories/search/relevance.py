"""Which results are good matches for their query: the relevance floor search applies by default.

A result is a good match when

- it is close to the query in meaning: vectorScore ≥ KYBERNESIS_SEARCH_MIN_VECTOR_SCORE (0.34), or
- it scores well on meaning and words together: hybridScore ≥ KYBERNESIS_SEARCH_MIN_SCORE (0.40), or
- it contains every word of the query (every query term, so all of the query's IDF), its
  hybridScore reaches KYBERNESIS_SEARCH_MIN_KEYWORD_SCORE (0.28), and its vectorScore is at least
  that of two unrelated texts (KEYWORD_MIN_VECTOR, 0.15): words met by chance in a reference list
  are no match.

A chat question (metadata.kind = "question") is a good match only beside a note that is one: a
question records what the person did not know, so it is never the answer itself. When no note
matches, the questions that would have passed go under the weaker matches ("running shoes size"
with only "what size were my running shoes?" stored returns nothing by default). A search limited
to chat messages (`source=chat`) is looking for what was said and keeps them.

Meaning alone makes a good match only in a language the embedding model reads (English, or a text
whose language was not told): all-MiniLM-L6-v2 finds unrelated French, German, Spanish or Russian
texts about as close to a query as an English answer (the figures: docs/decisions/0013-good-match-rule.md).
A passage in another language, or any passage for a query in one, is a good match by the query's
words: most of them (more than half of the query's IDF), whatever the hybridScore (its vectorScore is
near zero, so even a full keyword match in Japanese stays under the floors), or a hybridScore of at
least KYBERNESIS_SEARCH_MIN_SCORE.

Only good matches are returned unless the caller asks for a hybridScore floor of their own
(`minScore`; 0 returns every candidate), and the page labels the others "weaker matches".

The meaning side is judged on vectorScore and not on hybridScore because a paraphrase ("tooth
doctor" for the dentist note) shares no word with its answer: its metadata score is 0 and its
hybridScore at most 0.7 × vectorScore, while a query near a topic but without an answer ("tax rules
in Brazil" beside a note on quarterly tax payments) gains a partial keyword score. A partial keyword
match alone therefore never makes a good match on its own; all of the query's words do, or a
hybridScore that a partial match with little meaning does not reach.

The three thresholds come from `manage.py bench_calibrate` over SciFact, LoCoMo conversations and
both personal collections, with queries about things never stored (each set's queries searched in
the other sets' collections). Figures and the reliability curves: docs/benchmarks.md#relevance-floor
and docs/decisions/0013-good-match-rule.md. A rule relative to each query's background score (its
mean similarity to the owner's memories) was measured and rejected there: conversations about the
same two people have a high background, so it hid their answers, and in a collection unlike the
query (a scientific corpus asked about a person's errands) the background is low and let misses
through.
"""

from __future__ import annotations

from django.conf import settings

# A result "contains every word of the query" when its terms carry this share of the query's IDF
# (1, less a margin for the float sums).
FULL_MATCH = 0.999


Limits = tuple[float, float, float]


def thresholds() -> Limits:
    """(the vectorScore of a match by meaning, the hybridScore of any match, the hybridScore of a
    match of every word)."""
    return (
        float(settings.KYBERNESIS_SEARCH_MIN_VECTOR_SCORE),
        float(settings.KYBERNESIS_SEARCH_MIN_SCORE),
        float(settings.KYBERNESIS_SEARCH_MIN_KEYWORD_SCORE),
    )


# A passage with every word of the query is still no match when it means nothing like it: below the
# similarity of two unrelated texts (0.153 on average for the packaged model over SciFact's abstracts,
# docs/benchmarks.md#search) the words met by chance, as "book recommendation" did in a paper's
# reference list ("The Complete Book ... Recommending", vectorScore 0.12).
KEYWORD_MIN_VECTOR = 0.15
# Where meaning cannot be read, a passage must hold most of what the query asks for: more than this
# share of its words' IDF (one of two equally rare words is not most of them).
MOST_WORDS = 0.5
# The languages the embedding model reads (all-MiniLM-L6-v2 was trained on English); "" and None are
# texts whose language was not told.
MODEL_LANGUAGES = frozenset({"", None, "en"})


def passes(
    *,
    hybrid: float,
    vector: float,
    idf_share: float,
    limits: Limits | None = None,
    language: str | None = None,
    query_language: str = "",
) -> bool:
    """Whether a result with these scores, of a passage in `language` for a query in `query_language`,
    is a good match (the rule in the module docstring)."""
    min_vector, min_hybrid, min_keyword = limits or thresholds()
    if language not in MODEL_LANGUAGES or query_language not in MODEL_LANGUAGES:
        return hybrid >= min_hybrid or idf_share > MOST_WORDS
    return (
        vector >= min_vector
        or hybrid >= min_hybrid
        or (idf_share >= FULL_MATCH and hybrid >= min_keyword and vector >= KEYWORD_MIN_VECTOR)
    )


def questions_need_a_note(results: list, *, sources: tuple[str, ...] = ()) -> int:
    """Mark the chat questions among `results` (SearchResult) as weaker matches when no note among
    them is a good match (the rule in the module docstring); a search of chat messages only keeps them.
    Returns how many of the questions' memories were good matches until then, so that a page can say
    that only questions matched rather than that nothing did."""
    if sources and set(sources) <= {"chat"}:
        return 0
    if any(r.good_match and not r.is_question for r in results):
        return 0
    held = {r.memory_id for r in results if r.is_question and r.good_match}
    for result in results:
        if result.is_question:
            result.good_match = False
    return len(held)


def describe(limits: Limits | None = None) -> str:
    """The rule as the page and the API state it."""
    min_vector, min_hybrid, min_keyword = limits or thresholds()
    return (
        f"vectorScore ≥ {min_vector:.2f}, or hybridScore ≥ {min_hybrid:.2f}, "
        f"or every word of the query found, hybridScore ≥ {min_keyword:.2f} and vectorScore ≥ {KEYWORD_MIN_VECTOR:.2f}; "
        f"outside English: hybridScore ≥ {min_hybrid:.2f}, or most of the query's words found"
    )
