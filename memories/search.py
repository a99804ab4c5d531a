"""Hybrid retrieval: vector (HNSW cosine) + metadata (BM25, title, tags, priority) in one SQL round trip.

Scores, all in 0..1:

    vectorScore   = max(0, cosine similarity of the query and the chunk embeddings)
    metadataScore = 0.80 · lexical + 0.05 · title + 0.10 · tags + 0.05 · priority
        lexical   = BM25(query, chunk) / the highest BM25 among this query's candidates
        title     = share of the query's terms found in the memory title
        tags      = share of the query's terms found in the memory's combined tags
        priority  = the memory's priority
    hybridScore   = 0.7 · vectorScore + 0.3 · metadataScore   (KYBERNESIS_SEARCH_*_WEIGHT)

Candidates are the union of the nearest chunks by embedding and the best chunks by BM25 (the top
postings of each query term, summed), so a chunk found only by meaning or only by keywords can
still rank. Filters are hard and apply to both sides. BM25 uses PostgreSQL's english stemming and
the statistics in memories.lexical.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from memories import embedding, lexical
from memories.models import ACTIVE_TIERS, Memory, MemoryChunk, Source, Tier
from memories.tagging import filter_tags

# Measured on SciFact (where titles also open the text): moving weight from title to lexical helps
# (title 0.15 -> 0.05: 0.739 -> 0.742 nDCG@10); a little title weight stays for short notes.
LEXICAL_WEIGHT, TITLE_WEIGHT, TAG_WEIGHT, PRIORITY_WEIGHT = 0.80, 0.05, 0.10, 0.05
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
    created_after: datetime | None = None
    created_before: datetime | None = None
    updated_after: datetime | None = None
    updated_before: datetime | None = None
    title_contains: str | None = None
    pinned: bool | None = None

    def __post_init__(self):
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
        for name, column, op in (("min_priority", "m.priority", ">="), ("max_priority", "m.priority", "<="),
                                 ("created_after", "m.created_at", ">="), ("created_before", "m.created_at", "<"),
                                 ("updated_after", "m.updated_at", ">="), ("updated_before", "m.updated_at", "<")):
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
    parts: dict = field(default_factory=dict)  # the metadata score's components, for explanations

    @property
    def bars(self) -> list[tuple[str, float]]:
        return [("hybrid", self.hybrid_score), ("vector", self.vector_score), ("metadata", self.metadata_score)]


@dataclass
class SearchResponse:
    results: list[SearchResult]
    took_ms: float
    query_terms: list[str]


_VECTOR_LAYER_SQL = """(
    SELECT c.id FROM memories_memorychunk c {join_memory}
    WHERE {filters} AND {layer}
    ORDER BY c.embedding <=> %(qvec)s::vector
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
SELECT c.id, c.memory_id, c.tier, 1 - (c.embedding <=> %(qvec)s::vector) AS cosine,
       COALESCE((SELECT sum(t.idf * p.impact) FROM q_terms t JOIN memories_chunkterm p
                 ON p.chunk_id = c.id AND p.lexeme = t.lexeme), 0) AS bm25,
       (SELECT array_agg(lexeme) FROM q_terms) AS terms,
       m.title, m.source, m.priority, m.tags, m.manual_tags
FROM cands JOIN memories_memorychunk c ON c.id = cands.id JOIN memories_memory m ON m.id = c.memory_id
"""


def _validate(query, limit) -> str:
    if not isinstance(query, str) or not query.strip():
        raise SearchError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchError(f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise SearchError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return query.strip()


def hybrid_search(
    user,
    query: str,
    *,
    limit: int = 10,
    filters: SearchFilters | None = None,
    group_by: str = "chunk",
    track_access: bool = False,
    query_vector: np.ndarray | None = None,
    weights: tuple[float, float] | None = None,
) -> SearchResponse:
    """Rank the user's chunks for a query. `group_by="memory"` keeps each memory's best chunk."""
    started = time.perf_counter()
    query = _validate(query, limit)
    if group_by not in ("chunk", "memory"):
        raise SearchError("groupBy must be 'chunk' or 'memory'")
    filters = filters or SearchFilters()
    w_vec, w_meta = weights or (settings.KYBERNESIS_SEARCH_VECTOR_WEIGHT, settings.KYBERNESIS_SEARCH_METADATA_WEIGHT)
    qvec = embedding.embed_query(query) if query_vector is None else query_vector

    # Each side brings at least `limit` candidates, so a long result list is not cut short.
    k_vec = max(settings.KYBERNESIS_SEARCH_VECTOR_CANDIDATES, limit)
    params = {"owner": user.pk, "query": query, "qvec": _vector_literal(qvec), "k_vec": k_vec,
              "k_term": max(settings.KYBERNESIS_SEARCH_TERM_CANDIDATES, limit),
              "k_lex": max(settings.KYBERNESIS_SEARCH_LEXICAL_CANDIDATES, limit)}
    chunk_sql, memory_sql = filters.sql(params)
    where = chunk_sql + (f" AND {memory_sql}" if memory_sql else "")
    join_memory = "JOIN memories_memory m ON m.id = c.memory_id" if memory_sql else ""
    needs_chunk = memory_sql or "c.tier" in chunk_sql
    vector_layers = "\n    UNION ALL\n    ".join(
        _VECTOR_LAYER_SQL.format(join_memory=join_memory, filters=where, layer=layer)
        for layer in _vector_layers(filters.tiers)
    )
    sql = _SEARCH_SQL.format(
        cfg=lexical.TS_CONFIG, filters=where, join_memory=join_memory, vector_layers=vector_layers,
        lex_joins=f"JOIN memories_memorychunk c ON c.id = p.chunk_id {join_memory}" if needs_chunk else "",
        lex_filters=f"AND {where}" if needs_chunk else "",
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {int(max(settings.KYBERNESIS_SEARCH_EF_SEARCH, k_vec))}; "
                       "SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(sql, params)
        rows = cursor.fetchall()

    max_bm25 = max((row[4] for row in rows), default=0.0) or 0.0
    terms: list[str] = next((row[5] for row in rows if row[5]), None) or []
    pattern = _term_pattern(terms)
    scored: list[SearchResult] = []
    for chunk_id, memory_id, tier, cosine, bm25, _terms, title, source, priority, tags, manual_tags in rows:
        vector_score = _clamp(cosine)
        lexical_part = bm25 / max_bm25 if max_bm25 > 0 else 0.0
        title_part = term_share(terms, title, pattern)
        tag_part = term_share(terms, " ".join(tags).replace("-", " "), pattern)
        metadata_score = _clamp(LEXICAL_WEIGHT * lexical_part + TITLE_WEIGHT * title_part
                                + TAG_WEIGHT * tag_part + PRIORITY_WEIGHT * priority)
        scored.append(SearchResult(
            memory_id=memory_id, chunk_id=chunk_id, title=title, text="", snippet="",
            snippet_html="", hybrid_score=_clamp(w_vec * vector_score + w_meta * metadata_score),
            vector_score=vector_score, metadata_score=metadata_score, tier=tier, source=source, tags=list(tags),
            manual_tags=list(manual_tags), created_at=None,
            parts={"lexical": lexical_part, "title": title_part, "tags": tag_part, "priority": priority,
                   "bm25": bm25},
        ))
    scored.sort(key=lambda r: (-r.hybrid_score, -r.vector_score, r.chunk_id))
    if group_by == "memory":
        best: dict[int, SearchResult] = {}
        for result in scored:
            best.setdefault(result.memory_id, result)
        scored = list(best.values())
    results = scored[:limit]
    # Chunk texts are read for the returned results only, not for every candidate.
    details = {pk: (text, created) for pk, text, created in MemoryChunk.objects.filter(
        pk__in=[r.chunk_id for r in results]).values_list("pk", "text", "memory__created_at")}
    results = [r for r in results if r.chunk_id in details]  # a memory deleted mid-search drops out
    for result in results:
        result.text, result.created_at = details[result.chunk_id]
        result.snippet, result.snippet_html = make_snippet(result.text, terms)
    if track_access and results:
        memory_access_record(memory_ids={r.memory_id for r in results})
    return SearchResponse(results=results, took_ms=(time.perf_counter() - started) * 1000, query_terms=terms)


def memory_access_record(*, memory_ids) -> None:
    """Count one access for each memory, in one statement (search results and opened memories)."""
    Memory.objects.filter(pk__in=list(memory_ids)).update(access_count=F("access_count") + 1,
                                                          last_accessed_at=timezone.now())


def _clamp(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _vector_literal(vector) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32)) + "]"


def _term_pattern(terms: list[str]) -> re.Pattern[str] | None:
    """Words that start with a query lexeme: english stems are prefixes of the words they come from."""
    if not terms:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")\w*",
                      re.IGNORECASE)


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
        pieces.append(html.escape(window[last:m.start()]))
        pieces.append(f"<mark>{html.escape(m.group())}</mark>")
        last = m.end()
    pieces.append(html.escape(window[last:]))
    return prefix + window + suffix, prefix + "".join(pieces) + suffix
