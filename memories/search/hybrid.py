"""Hybrid retrieval: vector (HNSW cosine) + metadata (BM25F over text and title, tags, priority) in one
SQL round trip, then a relevance floor and questions placed after the notes.

The scores and how they are made are in memories.search.scoring; the statement in
memories.search.statement; the filters in memories.search.filters.

Relevance floor: only good matches are returned (memories.search.relevance: close in meaning, or
every word of the query found; calibrated, see docs/decisions/0013-good-match-rule.md); `min_score`
replaces the rule with a hybridScore floor of the caller's (0 returns every candidate).

Questions after answers: a chat message that asks something (metadata.kind = "question", set for
every chat memory by memories.services.kinds) is ranked after the notes that are good matches, so
"carbonara" shows the recipe before "Remind me what I need for carbonara"; with no note to show, a
question is only a weaker match (memories.search.relevance).

One result per memory (group_by="memory", what the page, the API and MCP do by default): each
memory ranks by its best good chunk alone (its best chunk when none is good), with how many of its
chunks are good matches and the next best two of them (memories.search.results.group_by_memory);
the limit counts memories. A long document
can fill the whole candidate pool with its own chunks, so when it does a second look fetches
candidates from the other memories.

Candidates are the union of the nearest chunks by embedding and the best chunks by BM25F (the top
postings of each query term, summed), so a chunk found only by meaning or only by keywords can
still rank. Filters are hard and apply to both sides. BM25F reads each chunk and the query in their
languages, with PostgreSQL's stemming and the statistics in memories.search.lexical.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import replace

import numpy as np
from django.conf import settings

from core.language import mostly_latin
from memories import embedding
from memories.search import lexical, relevance
from memories.search.filters import SearchError, SearchFilters, validate_request
from memories.search.results import SearchResponse, SearchResult, group_by_memory
from memories.search.scoring import TagShare, candidate_scores, order_results
from memories.search.snippets import make_snippet
from memories.search.statement import passage_details, read_query, search_candidates


def default_min_score() -> float:
    """The hybridScore at which any result is a good match: one side of the good-match rule every
    consumer applies by default (memories.search.relevance has all of it)."""
    return float(settings.KYBERNESIS_SEARCH_MIN_SCORE)


NO_WORDS = "The query has no words to search for, only punctuation or symbols."
ONLY_COMMON_WORDS = (
    "The query has only common words (such as “the”, “what”, “is”), which every note contains; "
    "add a word that says what you are looking for."
)


def hybrid_search(
    owner_id: int,
    query: str,
    *,
    limit: int = 10,
    filters: SearchFilters | None = None,
    group_by: str = "chunk",
    query_vector: np.ndarray | None = None,
    weights: tuple[float, float] | None = None,
    min_score: float | None = None,
    exclude_memory_ids: tuple[int, ...] = (),
) -> SearchResponse:
    """Rank the chunks of the owner (a user's id) for a query. `group_by="memory"` gives one result
    per memory: its best chunk, with its next best matching chunks as `more_passages`.

    Only good matches are returned (memories.search.relevance), or with `min_score` the results with
    hybridScore >= min_score; `weaker_count` says how many candidates the floor left out.
    """
    started = time.perf_counter()
    if isinstance(owner_id, bool) or not isinstance(owner_id, int):
        raise TypeError(f"hybrid_search takes the owner's id, not {type(owner_id).__name__}")
    query = validate_request(query, limit, min_score)
    if group_by not in ("chunk", "memory"):
        raise SearchError("groupBy must be 'chunk' or 'memory'")
    filters = filters or SearchFilters()
    limits = relevance.thresholds()
    floor = None if min_score is None else float(min_score)
    floor_text = relevance.describe(limits) if floor is None else f"hybridScore ≥ {floor:.2f}"
    if not _WORD.search(query):
        return SearchResponse(
            results=[],
            took_ms=(time.perf_counter() - started) * 1000,
            query_terms=[],
            min_score=floor,
            floor=floor_text,
            reason=NO_WORDS,
        )
    w_vec, w_meta = weights or (settings.KYBERNESIS_SEARCH_VECTOR_WEIGHT, settings.KYBERNESIS_SEARCH_METADATA_WEIGHT)
    qvec = embedding.embed_query(query) if query_vector is None else query_vector

    # The words searched for (the meaning is read from the query as it was written).
    words = lexical.without_lone_letters(query)
    reading = read_query(owner_id, words)
    candidates = search_candidates(
        owner_id,
        words,
        qvec,
        limit=limit,
        filters=filters,
        extra_candidates=len(exclude_memory_ids),
        reading=reading,
    )
    # The query's terms as a reader sees them (without their language prefixes), for the tags' share,
    # the snippets' marks and the response.
    terms: list[str] = list(
        dict.fromkeys(lexical.display_term(t) for t in next((c.terms for c in candidates if c.terms), []))
    )
    if candidates and not terms:
        # Every word was a stop word: the vector side would return the nearest notes to "what is the",
        # which is every note and none.
        return SearchResponse(
            results=[],
            took_ms=(time.perf_counter() - started) * 1000,
            query_terms=[],
            min_score=floor,
            floor=floor_text,
            reason=ONLY_COMMON_WORDS,
        )
    excluded = set(exclude_memory_ids)
    candidates = [c for c in candidates if c.memory_id not in excluded]
    if group_by == "memory":
        candidates = _other_memories_too(
            owner_id, words, qvec, candidates, limit=limit, filters=filters, excluded=excluded, reading=reading
        )
    max_bm25 = max((c.bm25 for c in candidates), default=0.0) or 0.0
    query_language = "other" if reading.foreign else _query_language(words, reading.language)
    tag_share = TagShare(terms)
    scored: list[SearchResult] = []
    for candidate in candidates:
        scores = candidate_scores(candidate, tag_share=tag_share, max_bm25=max_bm25, weights=(w_vec, w_meta))
        scored.append(
            SearchResult(
                memory_id=candidate.memory_id,
                chunk_id=candidate.chunk_id,
                chunk_index=candidate.position,
                title=candidate.title,
                text="",
                snippet="",
                snippet_html="",
                hybrid_score=scores.hybrid,
                vector_score=scores.vector,
                metadata_score=scores.metadata,
                tier=candidate.tier,
                source=candidate.source,
                tags=list(candidate.tags),
                manual_tags=list(candidate.manual_tags),
                created_at=None,
                kind=candidate.kind or "",
                parts=scores.parts,
                good_match=relevance.passes(
                    hybrid=scores.hybrid,
                    vector=scores.vector,
                    idf_share=scores.parts["idfShare"],
                    limits=limits,
                    language=candidate.language,
                    query_language=query_language,
                ),
            )
        )
    held_questions = relevance.questions_need_a_note(scored, sources=filters.sources)
    scored.sort(key=lambda r: (-r.hybrid_score, -r.vector_score, r.chunk_id))
    if group_by == "memory":
        scored = group_by_memory(scored, good=lambda r: r.good_match if floor is None else r.hybrid_score >= floor)
    kept = [r for r in scored if (r.good_match if floor is None else r.hybrid_score >= floor)]
    # With a caller's floor the results keep their hybridScore order, questions after the notes that
    # contain every word's worth of score (MIN_KEYWORD_SCORE), as before the rule: putting every
    # result that is not a good match last would reorder what the caller asked to rank.
    results = order_results(kept, floor=None if floor is None else limits[2])[:limit]
    # Chunk texts are read for the returned passages only, not for every candidate.
    wanted = [r.chunk_id for r in results] + [p.chunk_id for r in results for p in r.more_passages]
    details = passage_details(owner_id, wanted)
    results = [r for r in results if r.chunk_id in details]  # a memory deleted or trashed mid-search drops out
    for result in results:
        result.text, result.created_at, result.char_start, result.char_end = details[result.chunk_id]
        result.snippet, result.snippet_html = make_snippet(result.text, terms)
        result.more_passages = [p for p in result.more_passages if p.chunk_id in details]
        for passage in result.more_passages:
            passage.text, _, passage.char_start, passage.char_end = details[passage.chunk_id]
            passage.snippet, passage.snippet_html = make_snippet(passage.text, terms)
    return SearchResponse(
        results=results,
        took_ms=(time.perf_counter() - started) * 1000,
        query_terms=terms,
        min_score=floor,
        floor=floor_text,
        weaker_count=len(scored) - len(kept),
        weaker_questions=held_questions if floor is None else 0,
    )


def _query_language(query: str, detected: str) -> str:
    """The query's language for the good-match rule: one PostgreSQL stems, "" for English or a query
    whose language is not told (a misreading of a short English query, such as Latin for "mum phone
    number", has no config and so stays English), and "other" for one written mostly in another
    script than Latin, which the embedding model does not read either (and, set by the caller, for
    one whose words read as another language the detector could not name: QueryReading.foreign).
    `detected` is what core.language told of the query."""
    if language := lexical.language_prefix(detected):
        return language
    return "" if mostly_latin(query) or not _WORD.search(query) else "other"


def _other_memories_too(
    owner_id: int, query: str, qvec, candidates: list, *, limit: int, filters, excluded, reading
) -> list:
    """The candidates, and when one memory brought several chunks while fewer memories than `limit`
    came back, the candidates of the other memories too: one long document can fill every side of
    the pool with its own chunks and hide a short note that matches (one more statement, run only then)."""
    per_memory = Counter(c.memory_id for c in candidates)
    if not per_memory or len(per_memory) >= limit or max(per_memory.values()) < _FLOODING_CHUNKS:
        return candidates
    if len(candidates) >= reading.chunks:  # every chunk was a candidate: nothing is hidden
        return candidates
    others = replace(filters, exclude_memory_ids=(*filters.exclude_memory_ids, *per_memory, *excluded))
    return candidates + search_candidates(owner_id, query, qvec, limit=limit, filters=others, reading=reading)


# A memory with at least this many candidate chunks may be crowding the others out of the pool.
_FLOODING_CHUNKS = 3
_WORD = re.compile(r"[^\W_]")  # a letter or a digit, in any script
