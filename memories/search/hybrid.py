"""Hybrid retrieval: vector (HNSW cosine) + metadata (BM25F over text and title, tags, priority) in one
SQL round trip, then a relevance floor and questions placed after the notes.

The scores and how they are made are in memories.search.scoring; the statement in
memories.search.statement; the filters in memories.search.filters.

Relevance floor: results with hybridScore below KYBERNESIS_SEARCH_MIN_SCORE (calibrated, see
docs/decisions/0006-relevance-floor.md) are not returned; `min_score` overrides it (0 returns every
candidate).

Questions after answers: a chat message that asks something (metadata.kind = "question", set by
memories.services.chat) is ranked after the notes that pass the relevance floor, so "carbonara"
shows the recipe before "Remind me what I need for carbonara".

Candidates are the union of the nearest chunks by embedding and the best chunks by BM25F (the top
postings of each query term, summed), so a chunk found only by meaning or only by keywords can
still rank. Filters are hard and apply to both sides. BM25F uses PostgreSQL's english stemming and
the statistics in memories.search.lexical.
"""

from __future__ import annotations

import re
import time

import numpy as np
from django.conf import settings

from memories import embedding
from memories.models import MemoryChunk
from memories.search.filters import SearchError, SearchFilters, validate_request
from memories.search.results import SearchResponse, SearchResult
from memories.search.scoring import candidate_scores, order_results, term_pattern
from memories.search.snippets import make_snippet
from memories.search.statement import search_candidates


def default_min_score() -> float:
    """The relevance floor every consumer (search page, API, chat, answers) applies by default."""
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
    """Rank the chunks of the owner (a user's id) for a query. `group_by="memory"` keeps each memory's
    best chunk.

    Only results with hybridScore >= min_score are returned (default: the relevance floor,
    `default_min_score()`); `weaker_count` says how many candidates the floor left out.
    """
    started = time.perf_counter()
    if isinstance(owner_id, bool) or not isinstance(owner_id, int):
        raise TypeError(f"hybrid_search takes the owner's id, not {type(owner_id).__name__}")
    query = validate_request(query, limit, min_score)
    if group_by not in ("chunk", "memory"):
        raise SearchError("groupBy must be 'chunk' or 'memory'")
    filters = filters or SearchFilters()
    relevance_floor = default_min_score()
    floor = relevance_floor if min_score is None else float(min_score)
    if not _WORD.search(query):
        return SearchResponse(
            results=[], took_ms=(time.perf_counter() - started) * 1000, query_terms=[], min_score=floor, reason=NO_WORDS
        )
    w_vec, w_meta = weights or (settings.KYBERNESIS_SEARCH_VECTOR_WEIGHT, settings.KYBERNESIS_SEARCH_METADATA_WEIGHT)
    qvec = embedding.embed_query(query) if query_vector is None else query_vector

    candidates = search_candidates(
        owner_id, query, qvec, limit=limit, filters=filters, extra_candidates=len(exclude_memory_ids)
    )
    terms: list[str] = next((c.terms for c in candidates if c.terms), [])
    if candidates and not terms:
        # Every word was a stop word: the vector side would return the nearest notes to "what is the",
        # which is every note and none.
        return SearchResponse(
            results=[],
            took_ms=(time.perf_counter() - started) * 1000,
            query_terms=[],
            min_score=floor,
            reason=ONLY_COMMON_WORDS,
        )
    excluded = set(exclude_memory_ids)
    candidates = [c for c in candidates if c.memory_id not in excluded]
    max_bm25 = max((c.bm25 for c in candidates), default=0.0) or 0.0
    pattern = term_pattern(terms)
    scored: list[SearchResult] = []
    for candidate in candidates:
        scores = candidate_scores(candidate, terms=terms, pattern=pattern, max_bm25=max_bm25, weights=(w_vec, w_meta))
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
            )
        )
    scored.sort(key=lambda r: (-r.hybrid_score, -r.vector_score, r.chunk_id))
    if group_by == "memory":
        best: dict[int, SearchResult] = {}
        for result in scored:
            best.setdefault(result.memory_id, result)
        scored = list(best.values())
    kept = [r for r in scored if r.hybrid_score >= floor]
    results = order_results(kept, floor=relevance_floor)[:limit]
    # Chunk texts are read for the returned results only, not for every candidate.
    details = {
        pk: (text, created)
        for pk, text, created in MemoryChunk.objects.filter(
            owner_id=owner_id, pk__in=[r.chunk_id for r in results], memory__trashed_at=None
        ).values_list("pk", "text", "memory__created_at")
    }
    results = [r for r in results if r.chunk_id in details]  # a memory deleted or trashed mid-search drops out
    for result in results:
        result.text, result.created_at = details[result.chunk_id]
        result.snippet, result.snippet_html = make_snippet(result.text, terms)
    return SearchResponse(
        results=results,
        took_ms=(time.perf_counter() - started) * 1000,
        query_terms=terms,
        min_score=floor,
        weaker_count=len(scored) - len(kept),
    )


_WORD = re.compile(r"[^\W_]")  # a letter or a digit, in any script
