"""Hybrid retrieval: vector (HNSW cosine) + metadata (BM25F over text and title, tags, priority) in one
SQL round trip, then a relevance floor and questions placed after the notes.

Scores, all in 0..1:

    vectorScore   = max(0, cosine similarity of the query and the chunk embeddings)
                    (a chunk is embedded as "title — chunk text", see embedding.chunk_embedding_text)
    metadataScore = 0.85 · lexical + 0.10 · tags + 0.05 · priority
        lexical   = BM25F(query, chunk) / the highest BM25F among this query's candidates
                    × √(matched IDF share)
                    where matched IDF share = Σ idf of the query terms the chunk contains
                                              / Σ idf of all the query's terms
                    (BM25F: the memory title is a field of its first chunk, a title word counting as
                    two occurrences, memories.search.lexical.TITLE_WEIGHT; counted once per memory, and not
                    when the text already opens with the title)
        tags      = share of the query's terms found in the memory's combined tags
        priority  = the memory's priority
    hybridScore   = 0.7 · vectorScore + 0.3 · metadataScore   (KYBERNESIS_SEARCH_*_WEIGHT)

The IDF share is what makes a keyword score mean "how much of what you asked for is here": a chunk
that matches one of five equally rare query words is no longer the best lexical match at 1.0 but
scores √(1/5) ≈ 0.45, however few candidates there are. The square root was chosen by measurement
(README, "Search scores"): the linear share separates answers from no-answer queries a little better
on the personal set but costs SciFact 0.007-0.018 nDCG@10, since long claims rarely match every word;
the square root keeps SciFact at or above the old max-normalised form.

Relevance floor: results with hybridScore below KYBERNESIS_SEARCH_MIN_SCORE (calibrated, see
README) are not returned; `min_score` overrides it (0 returns every candidate, as before).

Questions after answers: a chat message that asks something (metadata.kind = "question", set by
memories.services.chat) is ranked after the notes that pass the relevance floor, so "carbonara"
shows the recipe before "Remind me what I need for carbonara".

Candidates are the union of the nearest chunks by embedding and the best chunks by BM25F (the top
postings of each query term, summed), so a chunk found only by meaning or only by keywords can
still rank. Filters are hard and apply to both sides. BM25F uses PostgreSQL's english stemming and
the statistics in memories.search.lexical.
"""

from __future__ import annotations

import html
import math
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from datetime import time as day_time

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone

from core.text import text_problem
from memories import embedding
from memories.models import ACTIVE_TIERS, CorpusStat, MemoryChunk, Source, Tier
from memories.search import lexical
from memories.tagging import filter_tags

# Titles are a field of the lexical score now (BM25F), so the old title weight moved into lexical.
LEXICAL_WEIGHT, TAG_WEIGHT, PRIORITY_WEIGHT = 0.85, 0.10, 0.05
# How the BM25F sum becomes the 0..1 lexical part (see the module docstring; "coverage_sqrt" is the
# default and the others are kept for bench_personal/bench_retrieval --lexical-form comparisons).
LEXICAL_FORMS = ("coverage", "coverage_sqrt", "relative", "attainable")
LEXICAL_FORM = "coverage_sqrt"
QUESTION = "question"
MAX_QUERY_CHARS = 2000
MAX_LIMIT = 100


class SearchError(ValueError):
    """A search request that cannot run; the message says why (HTTP 422)."""


@dataclass(frozen=True)
class SearchFilters:
    tags: tuple[str, ...] = ()
    tags_mode: str = "any"  # any | all
    sources: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    min_priority: float | None = None
    max_priority: float | None = None
    # A datetime is used as it is (naive ones in the current time zone); a plain date means the
    # whole day, so `created_before=2025-03-01` still includes memories of the first of March.
    created_after: datetime | date | None = None
    created_before: datetime | date | None = None
    updated_after: datetime | date | None = None
    updated_before: datetime | date | None = None
    title_contains: str | None = None
    pinned: bool | None = None

    def __post_init__(self):
        for name in ("created_after", "created_before", "updated_after", "updated_before"):
            object.__setattr__(
                self, name, _date_bound(getattr(self, name), name=name, end_of_day=name.endswith("_before"))
            )
        if self.title_contains is not None and (problem := text_problem(self.title_contains)):
            raise SearchError(f"titleContains {problem}")
        for tag in self.tags:
            if isinstance(tag, str) and (problem := text_problem(tag)):
                raise SearchError(f"tags {problem}")
        object.__setattr__(self, "tags", filter_tags(self.tags))
        if self.tags_mode not in ("any", "all"):
            raise SearchError("tagsMode must be 'any' or 'all'")
        if unknown := set(self.sources) - set(Source.values):
            raise SearchError(f"unknown source(s): {', '.join(sorted(unknown))}")
        if unknown := set(self.tiers) - set(Tier.values):
            raise SearchError(f"unknown tier(s): {', '.join(sorted(unknown))}")
        for name in ("min_priority", "max_priority"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 1:
                raise SearchError(f"{name} must be from 0 to 1")
        if self.min_priority is not None and self.max_priority is not None and self.min_priority > self.max_priority:
            raise SearchError("min_priority is above max_priority")

    def sql(self, params: dict) -> tuple[str, str]:
        """(conditions on chunk `c`, conditions on memory `m` or ""); the values go into params.

        Kept apart so that a search with no memory-level filter never joins the memory table on
        its candidate side, which keeps the HNSW and posting index scans cheap.
        """
        chunk = ["c.owner_id = %(owner)s"]
        if self.tiers and set(self.tiers) != set(Tier.values):
            chunk.append(_tier_condition(self.tiers))
        memory = []
        if self.sources:
            params["f_sources"] = list(self.sources)
            memory.append("m.source = ANY(%(f_sources)s)")
        if self.tags:
            params["f_tags"] = list(self.tags)
            memory.append("m.tags " + ("&&" if self.tags_mode == "any" else "@>") + " %(f_tags)s::varchar[]")
        for name, column, op in (
            ("min_priority", "m.priority", ">="),
            ("max_priority", "m.priority", "<="),
            ("created_after", "m.created_at", ">="),
            ("created_before", "m.created_at", "<"),
            ("updated_after", "m.updated_at", ">="),
            ("updated_before", "m.updated_at", "<"),
        ):
            value = getattr(self, name)
            if value is not None:
                params[f"f_{name}"] = value
                memory.append(f"{column} {op} %(f_{name})s")
        if self.title_contains:
            params["f_title"] = "%" + re.sub(r"([\\%_])", r"\\\1", self.title_contains) + "%"
            memory.append("m.title ILIKE %(f_title)s")
        if self.pinned is not None:
            params["f_pinned"] = self.pinned
            memory.append("m.pinned = %(f_pinned)s")
        return " AND ".join(chunk), " AND ".join(memory)


# Dates a filter may name. Wider than any memory's timestamps, and narrow enough that a day added for
# "end of day" or a time-zone shift never leaves Python's datetime range (year 1 to 9999).
MIN_FILTER_DATE = date(1000, 1, 1)
MAX_FILTER_DATE = date(9998, 12, 31)


def _date_bound(value, *, name: str, end_of_day: bool) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, (date, datetime)):
        raise SearchError(f"{_camel(name)} must be a date or a date and time")
    day = value.date() if isinstance(value, datetime) else value
    if not MIN_FILTER_DATE <= day <= MAX_FILTER_DATE:
        raise SearchError(
            f"a date must be between {MIN_FILTER_DATE.isoformat()} and {MAX_FILTER_DATE.isoformat()}; "
            f"got {day.isoformat()} ({_camel(name)})"
        )
    if not isinstance(value, datetime):
        value = datetime.combine(value + timedelta(days=1) if end_of_day else value, day_time.min)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.get_current_timezone())
    # The same instant in UTC: Python takes offsets up to ±23:59, PostgreSQL only up to ±15:59, and
    # the years are bounded above, so this cannot leave the years datetime can hold.
    return value.astimezone(UTC)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _tier_condition(tiers) -> str:
    # Tier names are validated, and written as literals so that the planner can prove the condition
    # implies a partial index's predicate (a bound parameter would hide it).
    return "c.tier IN (" + ", ".join(f"'{Tier(t).value}'" for t in sorted(set(tiers))) + ")"


def _vector_layers(tiers) -> list[str]:
    """The storage layers a search reads: hot+warm (one partial HNSW index) and archive (another).
    Each layer is scanned on its own index and the union of their nearest chunks is ranked."""
    wanted = set(tiers) or set(Tier.values)
    layers = []
    if active := wanted & set(ACTIVE_TIERS):
        layers.append(_tier_condition(active))
    if Tier.ARCHIVE in wanted:
        layers.append(_tier_condition([Tier.ARCHIVE]))
    return layers


@dataclass
class SearchResult:
    memory_id: int
    chunk_id: int
    chunk_index: int
    title: str
    text: str
    snippet: str
    snippet_html: str
    hybrid_score: float
    vector_score: float
    metadata_score: float
    tier: str
    source: str
    tags: list[str]
    manual_tags: list[str]
    created_at: datetime | None
    kind: str = ""  # "question" for a chat message that asks something
    parts: dict = field(default_factory=dict)  # the metadata score's components, for explanations

    @property
    def bars(self) -> list[tuple[str, float]]:
        return [("hybrid", self.hybrid_score), ("vector", self.vector_score), ("metadata", self.metadata_score)]

    @property
    def url(self) -> str:
        """Where a result leads: its memory's page, at the matched chunk. The one place this link is built."""
        return result_url(self.memory_id, self.chunk_index)

    @property
    def is_question(self) -> bool:
        return self.kind == QUESTION


def result_url(memory_id: int, chunk_index: int) -> str:
    """The click-through that opens a memory at a chunk: following it counts as an access (appearing
    in results does not), and it redirects to the memory page at `?chunk=<position>#chunk-<position>`
    (the page shows the right page of chunks, scrolls to the anchor and highlights it)."""
    return f"{reverse('memories:open', args=[memory_id])}?chunk={chunk_index}"


@dataclass
class SearchResponse:
    results: list[SearchResult]
    took_ms: float
    query_terms: list[str]
    min_score: float = 0.0  # the floor applied
    weaker_count: int = 0  # candidates left out by the floor (a page can offer to show them)
    reason: str = ""  # why there is nothing to search for, when the query has no usable words


def default_min_score() -> float:
    """The relevance floor every consumer (search page, API, chat, answers) applies by default."""
    return float(settings.KYBERNESIS_SEARCH_MIN_SCORE)


def lexical_score(bm25: float, max_bm25: float, matched_idf: float, total_idf: float, form: str | None = None) -> float:
    """The lexical part of metadataScore, 0..1 (the formula is in the module docstring)."""
    form = form or LEXICAL_FORM
    if bm25 <= 0 or total_idf <= 0:
        return 0.0
    if form == "attainable":  # a full match, each term once in an average-length chunk, scores Σ idf
        return _clamp(bm25 / total_idf)
    relative = bm25 / max_bm25 if max_bm25 > 0 else 0.0
    if form == "relative":
        return _clamp(relative)
    if form == "coverage_sqrt":
        return _clamp(relative * math.sqrt(matched_idf / total_idf))
    return _clamp(relative * matched_idf / total_idf)


def order_results(results: list[SearchResult], *, floor: float) -> list[SearchResult]:
    """Best first; among results at or above the floor, notes before questions (each by score)."""
    return sorted(
        results,
        key=lambda r: (
            r.hybrid_score < floor,
            r.is_question and r.hybrid_score >= floor,
            -r.hybrid_score,
            -r.vector_score,
            r.chunk_id,
        ),
    )


_VECTOR_LAYER_SQL = """(
    SELECT c.id FROM memories_memorychunk c {join_memory}
    WHERE {filters} AND {layer} AND c.embedding_model = %(model)s
    ORDER BY {order}
    LIMIT %(k_vec)s
)"""

_SEARCH_SQL = """
WITH q_terms AS (
    SELECT t.lexeme,
           ln(1 + (GREATEST(n.chunk_count - COALESCE(s.df, 0), 0) + 0.5) / (COALESCE(s.df, 0) + 0.5)) AS idf
    FROM unnest(to_tsvector('{cfg}', %(query)s)) AS t
    CROSS JOIN (SELECT COALESCE((SELECT chunk_count FROM memories_corpusstat WHERE owner_id = %(owner)s), 0)
                AS chunk_count) n
    LEFT JOIN memories_termstat s ON s.owner_id = %(owner)s AND s.lexeme = t.lexeme
), vec AS (
    {vector_layers}
), lex AS (
    SELECT x.id FROM q_terms t, LATERAL (
        SELECT p.chunk_id AS id, p.impact FROM memories_chunkterm p {lex_joins}
        WHERE p.owner_id = %(owner)s AND p.lexeme = t.lexeme {lex_filters}
        ORDER BY p.impact DESC LIMIT %(k_term)s
    ) x
    GROUP BY x.id ORDER BY sum(t.idf * x.impact) DESC LIMIT %(k_lex)s
), cands AS (
    SELECT id FROM vec UNION SELECT id FROM lex
)
SELECT c.id, c.memory_id, c.position, c.tier,
       CASE WHEN c.embedding_model = %(model)s THEN 1 - (c.embedding <=> %(qvec)s::vector) ELSE 0 END AS cosine,
       lx.bm25, lx.matched_idf, (SELECT sum(idf) FROM q_terms)::float8 AS total_idf,
       (SELECT array_agg(lexeme) FROM q_terms) AS terms,
       m.title, m.source, m.priority, m.tags, m.manual_tags, m.metadata ->> 'kind' AS kind
FROM cands JOIN memories_memorychunk c ON c.owner_id = %(owner)s AND c.id = cands.id
JOIN memories_memory m ON m.id = c.memory_id
CROSS JOIN LATERAL (
    SELECT COALESCE(sum(t.idf * p.impact), 0) AS bm25, COALESCE(sum(t.idf), 0)::float8 AS matched_idf
    FROM q_terms t JOIN memories_chunkterm p ON p.chunk_id = c.id AND p.lexeme = t.lexeme
) lx
"""

NO_WORDS = "The query has no words to search for, only punctuation or symbols."
ONLY_COMMON_WORDS = (
    "The query has only common words (such as “the”, “what”, “is”), which every note contains; "
    "add a word that says what you are looking for."
)


def _validate(query, limit, min_score) -> str:
    if not isinstance(query, str) or not query.strip():
        raise SearchError("the query is empty")
    if problem := text_problem(query):
        raise SearchError(f"the query {problem}")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchError(f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise SearchError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    if min_score is not None and (
        isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not 0 <= min_score <= 1
    ):
        raise SearchError("minScore must be a number from 0 to 1")
    return query.strip()


# Exact nearest neighbours for an owner with at most this many chunks (see _exact_for).
_EXACT_ORDER = "(c.embedding <=> %(qvec)s::vector) + 0"  # not the indexed form: the planner cannot use HNSW
_INDEX_ORDER = "c.embedding <=> %(qvec)s::vector"


def _exact_for(owner_id: int) -> bool:
    """Whether this owner's vector candidates are found exactly rather than through the HNSW index.

    The HNSW index is shared by every owner. An index scan walks the nearest vectors of the whole
    table and keeps the owner's; with many other owners, or many dead index entries left by deleted
    and re-chunked memories (they stay until VACUUM), pgvector's iterative scan can give up
    (hnsw.max_scan_tuples) before it reaches the owner's rows, and a small collection then gets no
    vector candidates at all. For an owner with few chunks an exact scan through the owner index is
    both complete and fast, so it is used up to KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS. The size is the
    chunk count the lexical index already keeps per owner (CorpusStat): one primary-key read."""
    bound = settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS
    if bound <= 0:
        return False
    chunks = CorpusStat.objects.filter(owner_id=owner_id).values_list("chunk_count", flat=True).first()
    return (chunks or 0) <= bound


def search_statement(
    owner_id: int,
    query: str,
    qvec,
    *,
    limit: int,
    filters: SearchFilters,
    extra_candidates: int = 0,
    exact: bool = False,
) -> tuple[str, dict]:
    """The one SQL statement hybrid_search runs, with its parameters (tests EXPLAIN this very statement).
    `exact` ranks the vector candidates without the HNSW index (see _exact_for)."""
    # Each side brings at least `limit` candidates (more when some will be excluded), so a long
    # result list is not cut short. An exact search brings the candidates of the longest list
    # (MAX_LIMIT) whatever the limit: it scores every chunk of the owner anyway, and so the first ten
    # results are the same whether 10 or 100 are asked for (a smaller pool let a limit-10 search miss
    # what a limit-100 search ranks in its top ten). Through the HNSW index the pool stays the
    # settings' size, as a deeper index scan costs latency at 100k chunks (README, "Search scores").
    pool = MAX_LIMIT if exact else 0
    k_vec = max(settings.KYBERNESIS_SEARCH_VECTOR_CANDIDATES, limit + extra_candidates, pool)
    # Vectors of another model (chunks not yet re-embedded) are never compared with this query's.
    params = {
        "owner": owner_id,
        "query": query,
        "qvec": _vector_literal(qvec),
        "k_vec": k_vec,
        "model": embedding.model_name(),
        "k_term": max(settings.KYBERNESIS_SEARCH_TERM_CANDIDATES, limit, pool),
        "k_lex": max(settings.KYBERNESIS_SEARCH_LEXICAL_CANDIDATES, limit, pool),
    }
    chunk_sql, memory_sql = filters.sql(params)
    where = chunk_sql + (f" AND {memory_sql}" if memory_sql else "")
    join_memory = "JOIN memories_memory m ON m.id = c.memory_id" if memory_sql else ""
    needs_chunk = memory_sql or "c.tier" in chunk_sql
    vector_layers = "\n    UNION ALL\n    ".join(
        _VECTOR_LAYER_SQL.format(
            join_memory=join_memory, filters=where, layer=layer, order=_EXACT_ORDER if exact else _INDEX_ORDER
        )
        for layer in _vector_layers(filters.tiers)
    )
    sql = _SEARCH_SQL.format(
        cfg=lexical.TS_CONFIG,
        filters=where,
        join_memory=join_memory,
        vector_layers=vector_layers,
        lex_joins=f"JOIN memories_memorychunk c ON c.id = p.chunk_id {join_memory}" if needs_chunk else "",
        lex_filters=f"AND {where}" if needs_chunk else "",
    )
    return sql, params


def hybrid_search(
    user,
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
    """Rank the user's chunks for a query. `group_by="memory"` keeps each memory's best chunk.

    Only results with hybridScore >= min_score are returned (default: the relevance floor,
    `default_min_score()`); `weaker_count` says how many candidates the floor left out.
    """
    started = time.perf_counter()
    query = _validate(query, limit, min_score)
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

    sql, params = search_statement(
        user.pk,
        query,
        qvec,
        limit=limit,
        filters=filters,
        extra_candidates=len(exclude_memory_ids),
        exact=_exact_for(user.pk),
    )
    k_vec = params["k_vec"]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"SET LOCAL hnsw.ef_search = {int(max(settings.KYBERNESIS_SEARCH_EF_SEARCH, k_vec))}; "
            "SET LOCAL hnsw.iterative_scan = relaxed_order"
        )
        cursor.execute(sql, params)
        rows = cursor.fetchall()

    terms: list[str] = next((row[8] for row in rows if row[8]), None) or []
    if rows and not terms:
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
    max_bm25 = max((row[5] for row in rows if row[1] not in excluded), default=0.0) or 0.0
    pattern = _term_pattern(terms)
    scored: list[SearchResult] = []
    for (
        chunk_id,
        memory_id,
        position,
        tier,
        cosine,
        bm25,
        matched_idf,
        total_idf,
        _terms,
        title,
        source,
        priority,
        tags,
        manual_tags,
        kind,
    ) in rows:
        if memory_id in excluded:
            continue
        vector_score = _clamp(cosine)
        lexical_part = lexical_score(bm25, max_bm25, matched_idf, total_idf or 0.0)
        tag_part = term_share(terms, " ".join(tags).replace("-", " "), pattern)
        metadata_score = _clamp(LEXICAL_WEIGHT * lexical_part + TAG_WEIGHT * tag_part + PRIORITY_WEIGHT * priority)
        scored.append(
            SearchResult(
                memory_id=memory_id,
                chunk_id=chunk_id,
                chunk_index=position,
                title=title,
                text="",
                snippet="",
                snippet_html="",
                hybrid_score=_clamp(w_vec * vector_score + w_meta * metadata_score),
                vector_score=vector_score,
                metadata_score=metadata_score,
                tier=tier,
                source=source,
                tags=list(tags),
                manual_tags=list(manual_tags),
                created_at=None,
                kind=kind or "",
                parts={
                    "lexical": lexical_part,
                    "tags": tag_part,
                    "priority": priority,
                    "bm25": bm25,
                    "idfShare": (matched_idf / total_idf) if total_idf else 0.0,
                },
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
            owner_id=user.pk, pk__in=[r.chunk_id for r in results]
        ).values_list("pk", "text", "memory__created_at")
    }
    results = [r for r in results if r.chunk_id in details]  # a memory deleted mid-search drops out
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


def _clamp(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _vector_literal(vector) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32)) + "]"


def _term_pattern(terms: list[str]) -> re.Pattern[str] | None:
    """Words that start with a query lexeme: english stems are prefixes of the words they come from."""
    if not terms:
        return None
    return re.compile(
        r"\b(?:" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")\w*", re.IGNORECASE
    )


def term_share(terms: list[str], text: str, pattern: re.Pattern[str] | None = None) -> float:
    """The share of query terms that some word of the text starts with (title and tag matching)."""
    pattern = pattern or _term_pattern(terms)
    if pattern is None or not text:
        return 0.0
    hits = {t for m in pattern.finditer(text) for t in terms if m.group().lower().startswith(t)}
    return len(hits) / len(terms)


def make_snippet(text: str, terms: list[str], *, width: int = 240) -> tuple[str, str]:
    """A window of the text around the densest run of query terms, as plain text and as HTML with <mark>."""
    text = " ".join(text.split())
    pattern = _term_pattern(terms)
    matches = list(pattern.finditer(text)) if pattern else []
    if matches:
        starts = [m.start() for m in matches]
        best_start, best_count, j = starts[0], 0, 0
        for i, begin in enumerate(starts):  # densest window of matches, two pointers
            while j < len(starts) and starts[j] < begin + width:
                j += 1
            if j - i > best_count:
                best_start, best_count = begin, j - i
        start = max(0, best_start - width // 4)
    else:
        start = 0
    end = min(len(text), start + width)
    if start > 0:
        start = text.find(" ", start) + 1 or start
    if end < len(text):
        end = text.rfind(" ", start, end) if text.rfind(" ", start, end) > start else end
    window = text[start:end]
    prefix, suffix = ("…" if start > 0 else ""), ("…" if end < len(text) else "")
    pieces, last = [], 0
    for m in pattern.finditer(window) if pattern else ():
        pieces.append(html.escape(window[last : m.start()]))
        pieces.append(f"<mark>{html.escape(m.group())}</mark>")
        last = m.end()
    pieces.append(html.escape(window[last:]))
    return prefix + window + suffix, prefix + "".join(pieces) + suffix
