"""The one SQL statement of hybrid search: the candidates (nearest chunks by embedding in each
storage layer, best chunks by BM25F) with what their scores are made of, in one round trip."""

from __future__ import annotations

from typing import NamedTuple

import psycopg
from django.conf import settings
from django.db import connection, transaction

from core.language import detect_language
from memories import embedding
from memories.models import ACTIVE_TIERS, CorpusStat, Tier
from memories.search import lexical
from memories.search.filters import MAX_LIMIT, SearchFilters, tier_condition


class Candidate(NamedTuple):
    """One candidate chunk as the statement returns it (its columns, in order): what its scores are
    made of, and the memory fields a result shows."""

    chunk_id: int
    memory_id: int
    position: int
    tier: str
    cosine: float  # 0 for a chunk embedded by another model
    bm25: float
    matched_idf: float  # Σ idf of the query terms the chunk contains
    total_idf: float | None  # Σ idf of all the query's terms (None when it has none)
    terms: list[str] | None  # the query's lexemes, the same on every row
    title: str
    source: str
    priority: float
    tags: list[str]
    manual_tags: list[str]
    kind: str | None  # the memory's metadata.kind ("question" for a chat message that asks)
    language: str | None  # the chunk's language (core.language), "" or None when not told


def _vector_layers(tiers) -> list[str]:
    """The storage layers a search reads: hot+warm (one partial HNSW index) and archive (another).
    Each layer is scanned on its own index and the union of their nearest chunks is ranked."""
    wanted = set(tiers) or set(Tier.values)
    layers = []
    if active := wanted & set(ACTIVE_TIERS):
        layers.append(tier_condition(active))
    if Tier.ARCHIVE in wanted:
        layers.append(tier_condition([Tier.ARCHIVE]))
    return layers


_VECTOR_LAYER_SQL = """(
    SELECT c.id, {order} AS distance FROM memories_memorychunk c {join_memory}
    WHERE {filters} AND {layer} AND c.embedding_model = %(model)s
    ORDER BY distance
    LIMIT %(k_vec)s
)"""

_SEARCH_SQL = """
WITH q_terms AS (
    -- The query's terms, each with the word it reads (a word read in several languages is a group).
    -- Each term's document frequency is looked up on its own (a join could read all of the owner's
    -- statistics when the planner's row counts for a new owner are stale).
    SELECT t.lexeme, t.word, ln(1 + (GREATEST(n.chunk_count - s.df, 0) + 0.5) / (s.df + 0.5)) AS idf
    FROM {query_terms}
    CROSS JOIN (SELECT COALESCE((SELECT chunk_count FROM memories_corpusstat WHERE owner_id = %(owner)s), 0)
                AS chunk_count) n
    CROSS JOIN LATERAL (SELECT COALESCE((SELECT df FROM memories_termstat
                                          WHERE owner_id = %(owner)s AND lexeme = t.lexeme), 0) AS df OFFSET 0) s
), q_words AS (
    -- A word's IDF is its rarest reading's: finding it in any of its readings finds all of it.
    SELECT word, max(idf) AS idf FROM q_terms GROUP BY word
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
    -- A chunk found by meaning keeps the distance its scan computed (its vector is not read twice).
    SELECT id, min(distance) AS distance FROM (SELECT id, distance FROM vec UNION ALL SELECT id, NULL FROM lex) u
    GROUP BY id
), hits AS MATERIALIZED (
    -- Each candidate's postings of the query's terms: the candidates as a semi-join, which the planner
    -- can hash or merge, or run as one (chunk, lexeme) index lookup each. As a filter, "chunk_id =
    -- ANY(ARRAY(...))" compared each of the terms' postings with every candidate in turn (7,000
    -- postings × 160 candidates for a SciFact claim). A word counts once, by its best reading in the chunk.
    SELECT h.chunk_id, sum(h.bm25) AS bm25, sum(w.idf)::float8 AS matched_idf
    FROM (
        SELECT p.chunk_id, t.word, max(t.idf * p.impact) AS bm25
        FROM memories_chunkterm p JOIN q_terms t ON t.lexeme = p.lexeme
        WHERE p.chunk_id IN (SELECT id FROM cands) AND p.lexeme = ANY(ARRAY(SELECT lexeme FROM q_terms))
          AND p.owner_id = %(owner)s
        GROUP BY p.chunk_id, t.word
    ) h JOIN q_words w ON w.word = h.word
    GROUP BY h.chunk_id
), found AS (
    -- The hits as three arrays in one row, read by position below: joined as rows, each candidate
    -- scanned every hit, since the planner cannot count a CTE's rows.
    SELECT array_agg(chunk_id) AS ids, array_agg(bm25) AS bm25, array_agg(matched_idf) AS matched_idf FROM hits
)
SELECT c.id AS chunk_id, c.memory_id, c.position, c.tier,
       CASE WHEN cands.distance IS NOT NULL THEN 1 - cands.distance
            WHEN c.embedding_model = %(model)s THEN 1 - (c.embedding <=> %(qvec)s::vector) ELSE 0 END AS cosine,
       COALESCE(f.bm25[x.at], 0) AS bm25, COALESCE(f.matched_idf[x.at], 0)::float8 AS matched_idf,
       (SELECT sum(idf) FROM q_words)::float8 AS total_idf,
       (SELECT array_agg(lexeme) FROM q_terms) AS terms,
       c.title, c.source, c.priority, c.tags, c.manual_tags, c.kind, c.language
FROM cands CROSS JOIN found f
CROSS JOIN LATERAL (
    -- Each candidate's row by its primary key (OFFSET 0 keeps this a lookup per candidate: as a
    -- join, stale row counts for a new owner made the planner read all of the owner's chunks). The
    -- owner is checked, not searched by: both sides already found the owner's chunks only.
    SELECT c.id, c.memory_id, c.position, c.tier, c.embedding_model, c.embedding, c.language,
           m.title, m.source, m.priority, m.tags, m.manual_tags, m.metadata ->> 'kind' AS kind
    FROM memories_memorychunk c JOIN memories_memory m ON m.id = c.memory_id
    WHERE c.id = cands.id AND c.owner_id + 0 = %(owner)s
    OFFSET 0
) c
CROSS JOIN LATERAL (SELECT array_position(f.ids, c.id) AS at) x
"""


# Exact nearest neighbours for an owner with at most this many chunks (see exact_for).
_EXACT_ORDER = "(c.embedding <=> %(qvec)s::vector) + 0"  # not the indexed form: the planner cannot use HNSW
_INDEX_ORDER = "c.embedding <=> %(qvec)s::vector"

# An exact search reads the owner's vectors from memorychunk_owner_vectors by an index-only scan.
# The planner would rather scan the table (or the owner's rows through a smaller index), as it does
# not count that each vector is then fetched from TOAST: on SciFact's 9,268 chunks of one owner the
# table scan took 28 ms and the index-only scan 6 ms. For this statement only, it is kept off the
# table and bitmap scans and told that its (cached) index pages are cheap to read at random.
_EXACT_SETTINGS = "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL random_page_cost = 1.1"


def vector_plan(owner_id: int, chunks: int | None = None) -> tuple[bool, int]:
    """How this owner's vector candidates are found: exactly or not (exact_for), and the HNSW
    ef_search for its size (ef_search_for), from its chunk count (read when not given)."""
    chunks = owner_stats(owner_id)[0] if chunks is None else chunks
    bound = settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS
    return bound > 0 and chunks <= bound, ef_search_for(chunks)


# pgvector's largest hnsw.ef_search.
EF_SEARCH_MAX = 1000


def ef_search_for(chunks: int) -> int:
    """The HNSW ef_search for an owner of this many chunks: KYBERNESIS_SEARCH_EF_SEARCH, and one more
    for every KYBERNESIS_SEARCH_CHUNKS_PER_EF chunks past that (at most pgvector's 1000). The index's
    recall falls as an owner grows: at ef_search 64 it is 0.961 at 100,000 chunks and 0.762 at a
    million, where 500 is needed for 0.95 (docs/decisions/0020-ef-search-grows-with-the-owner.md)."""
    per = settings.KYBERNESIS_SEARCH_CHUNKS_PER_EF
    scaled = chunks // per if per > 0 else 0
    return min(EF_SEARCH_MAX, max(settings.KYBERNESIS_SEARCH_EF_SEARCH, scaled))


def exact_for(owner_id: int) -> bool:
    """Whether this owner's vector candidates are found exactly rather than through the HNSW index.

    The HNSW index is shared by every owner. An index scan walks the nearest vectors of the whole
    table and keeps the owner's; with many other owners, or many dead index entries left by deleted
    and re-chunked memories (they stay until VACUUM), pgvector's iterative scan can give up
    (hnsw.max_scan_tuples) before it reaches the owner's rows, and a small collection then gets no
    vector candidates at all. For an owner with few chunks an exact scan through the owner index is
    both complete and fast, so it is used up to KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS. The size is the
    chunk count the lexical index already keeps per owner (CorpusStat): one primary-key read."""
    return vector_plan(owner_id)[0]


def owner_chunk_count(owner_id: int) -> int:
    """How many chunks the owner has, as the lexical index counts them (CorpusStat); 0 for none."""
    return owner_stats(owner_id)[0]


def owner_stats(owner_id: int) -> tuple[int, list[str]]:
    """How many chunks the owner has, as the lexical index counts them, and the languages its index
    holds (CorpusStat); (0, []) for none. Read on every search, so as one plain statement rather than a
    queryset built each time."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT chunk_count, languages FROM {CorpusStat._meta.db_table} WHERE owner_id = %s", [owner_id]
        )
        row = cursor.fetchone()
    return (row[0], list(row[1])) if row else (0, [])


def search_statement(
    owner_id: int,
    query: str,
    qvec,
    *,
    limit: int,
    filters: SearchFilters,
    extra_candidates: int = 0,
    exact: bool = False,
    terms: list[list[str]] | None = None,
) -> tuple[str, dict]:
    """The one SQL statement hybrid_search runs, with its parameters (tests EXPLAIN this very statement).
    `exact` ranks the vector candidates without the HNSW index (see exact_for). `terms` are the query's
    words as lexical.query_terms reads them, a group of terms each; without them the query is read in
    english in the statement."""
    # Each side brings at least `limit` candidates (more when some will be excluded), so a long
    # result list is not cut short. An exact search brings the candidates of the longest list
    # (MAX_LIMIT) whatever the limit: it scores every chunk of the owner anyway, and so the first ten
    # results are the same whether 10 or 100 are asked for (a smaller pool could miss what a limit-100
    # search ranks in its top ten). Through the HNSW index the pool stays the settings' size, as a
    # deeper index scan costs latency at 100k chunks (docs/decisions/0007-exact-search-for-small-owners.md).
    pool = MAX_LIMIT if exact else 0
    k_vec = max(settings.KYBERNESIS_SEARCH_VECTOR_CANDIDATES, limit + extra_candidates, pool)
    # Vectors of another model (chunks not yet re-embedded) are never compared with this query's.
    params = {
        "owner": owner_id,
        "query": query,
        "qvec": embedding.vector_literal(qvec),
        "k_vec": k_vec,
        "model": embedding.model_name(),
        "k_term": max(settings.KYBERNESIS_SEARCH_TERM_CANDIDATES, limit, pool),
        "k_lex": max(settings.KYBERNESIS_SEARCH_LEXICAL_CANDIDATES, limit, pool),
    }
    if terms is not None:
        params["terms"] = [term for group in terms for term in group]
        params["words"] = [word for word, group in enumerate(terms) for _ in group]
    chunk_sql, memory_sql = filters.sql(params)
    where = chunk_sql + (f" AND {memory_sql}" if memory_sql else "")
    join_memory = "JOIN memories_memory m ON m.id = c.memory_id" if memory_sql else ""
    needs_chunk = memory_sql or "c.tier" in chunk_sql or "c.memory_id" in chunk_sql
    vector_layers = "\n    UNION ALL\n    ".join(
        _VECTOR_LAYER_SQL.format(
            join_memory=join_memory, filters=where, layer=layer, order=_EXACT_ORDER if exact else _INDEX_ORDER
        )
        for layer in _vector_layers(filters.tiers)
    )
    sql = _SEARCH_SQL.format(
        query_terms=(
            f"unnest(to_tsvector('{lexical.TS_CONFIG}', %(query)s)) WITH ORDINALITY AS t(lexeme, positions, weights, word)"
            if terms is None
            else "unnest(%(terms)s::text[], %(words)s::int[]) AS t(lexeme, word)"
        ),
        filters=where,
        join_memory=join_memory,
        vector_layers=vector_layers,
        lex_joins=f"JOIN memories_memorychunk c ON c.id = p.chunk_id {join_memory}" if needs_chunk else "",
        lex_filters=f"AND {where}" if needs_chunk else "",
    )
    return sql, params


class QueryReading(NamedTuple):
    """What a search reads once, before its statements: the owner's chunk count, the query's language,
    its words as the owner's index holds them (None: read in english in the statement), and whether
    it reads as another language than English that the detector could not tell
    (lexical.foreign_function_words)."""

    chunks: int
    language: str
    terms: list[list[str]] | None
    foreign: bool = False


def read_query(owner_id: int, query: str) -> QueryReading:
    """The query read for this owner: in every language the owner's index holds (lexical.read_words)
    when it holds others than english, the query is in one, or it holds CJK."""
    chunks, languages = owner_stats(owner_id)
    language = detect_language(query)
    if not lexical.needs_readings(query, languages, language):
        return QueryReading(chunks, language, None)
    words = lexical.read_words(owner_id, query, languages=languages, query_language=language)
    return QueryReading(chunks, language, words.groups, words.foreign)


def search_candidates(
    owner_id: int,
    query: str,
    qvec,
    *,
    limit: int,
    filters: SearchFilters,
    extra_candidates: int = 0,
    reading: QueryReading | None = None,
) -> list[Candidate]:
    """Run the statement for this owner, exactly or through the HNSW index (see vector_plan), with the
    query as `reading` reads it (read_query, when not given)."""
    reading = reading or read_query(owner_id, query)
    exact, ef_search = vector_plan(owner_id, reading.chunks)
    sql, params = search_statement(
        owner_id,
        query,
        qvec,
        limit=limit,
        filters=filters,
        extra_candidates=extra_candidates,
        exact=exact,
        terms=reading.terms,
    )
    index_settings = (
        _EXACT_SETTINGS
        if exact
        else (
            f"SET LOCAL hnsw.ef_search = {int(max(ef_search, params['k_vec']))}; "
            "SET LOCAL hnsw.iterative_scan = relaxed_order"
        )
    )
    with connection.cursor() as cursor:
        if isinstance(cursor.cursor, psycopg.ClientCursor):
            # One round trip instead of four (BEGIN, SET, the statement, COMMIT): parameters are bound
            # client-side, so the settings and the statement go as one simple query, which PostgreSQL
            # runs as one implicit transaction that the SET LOCALs last for.
            cursor.execute(f"{index_settings};\n{sql}", params)
            while cursor.description is None and cursor.nextset():
                pass  # past the SETs' empty results
            return [Candidate(*row) for row in cursor.fetchall()]
    with transaction.atomic(), connection.cursor() as cursor:  # server-side binding: one statement each
        cursor.execute(index_settings)
        cursor.execute(sql, params)
        return [Candidate(*row) for row in cursor.fetchall()]


_PASSAGES_SQL = """
SELECT c.id, c.text, m.created_at, c.char_start, c.char_end
FROM memories_memorychunk c JOIN memories_memory m ON m.id = c.memory_id
WHERE c.owner_id = %s AND c.id = ANY(%s) AND m.trashed_at IS NULL
"""


def passage_details(owner_id: int, chunk_ids: list[int]) -> dict[int, tuple]:
    """(text, memory created_at, char_start, char_end) of the chunks a search returns, by chunk id; a
    chunk whose memory was deleted or trashed meanwhile is absent."""
    if not chunk_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_PASSAGES_SQL, [owner_id, list(chunk_ids)])
        return {pk: (text, created, start, end) for pk, text, created, start, end in cursor.fetchall()}
