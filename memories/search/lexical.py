"""The lexical (BM25F) index in PostgreSQL: postings per chunk term, document frequencies, corpus totals.

A chunk has two fields: its text and, for a memory's first chunk, the memory's title (weighted, see
TITLE_WEIGHT).

Kept up to date in the same transaction as the chunks it describes: `index_memories` after chunks
are inserted, `unindex_memories` before they are deleted. PostgreSQL's english text search config
does the tokenising, stop-word removal and stemming, so queries and chunks agree on terms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from django.db import connection

from memories.models import TRASH_LAYER

# Okapi BM25 parameters: Anserini's defaults, which suit short passages better than Lucene's
# k1=1.2, b=0.75 (docs/decisions/0002-bm25-postings.md).
K1 = 0.9
B = 0.4
# Length prior for an owner's first chunks, in distinct lexemes (a 1,200-character chunk has ~90).
DEFAULT_AVG_LENGTH = 90.0
TS_CONFIG = "english"

# BM25F: the memory's title is a second field of its first chunk. A title word counts as TITLE_WEIGHT
# occurrences in that chunk (and the title's lexemes add TITLE_WEIGHT each to the chunk's length),
# before BM25's saturation, so "postgres" finds the note titled "Postgres vacuum tuning" whose body
# never says it. A title word weighs as much as two mentions in the text: a title states what the
# memory is about, in few words (the usual BM25F title boost is of this order).
#
# The title is counted once per memory, where the memory begins, the way a reader meets it:
# - with the first chunk only. Giving every chunk of a long note the title's words would count
#   them again for each chunk, and a later chunk could outrank the text that matches the query
#   for its title alone (the chunk embeddings still carry the title as context, so a later chunk
#   is still found by what the title means);
# - and not at all when that chunk already opens with the title (a title taken from the first
#   line, a document that repeats its heading), the same rule as embedding.chunk_embedding_text,
#   so a title is not counted as three mentions when the text already states it.
# The figures behind this rule: docs/decisions/0005-keyword-score.md.
TITLE_WEIGHT = 2.0

# The title as chunk_embedding_text normalises it (whitespace collapsed, a trailing "…" dropped), and
# whether the chunk's text opens with it (case-insensitive, whitespace collapsed).
_TITLE = r"btrim(rtrim(regexp_replace(btrim(m.title), '\s+', ' ', 'g'), '…'))"
_OPENS_WITH_TITLE = (
    rf"starts_with(lower(btrim(regexp_replace(left(c.text, char_length({_TITLE}) * 2 + 16), '\s+', ' ', 'g'))), "
    rf"lower({_TITLE}))"
)

# The chunk's terms as (lexeme, weighted tf) and its weighted length, from the body's tsvector and
# the title's. Used by both index and unindex, which must agree on lengths.
_FIELDS = f"""
    SELECT c.owner_id, c.id AS chunk_id, c.search_vector AS body,
           CASE WHEN c.position = 0 AND NOT {_OPENS_WITH_TITLE} THEN to_tsvector('{TS_CONFIG}', m.title)
                ELSE ''::tsvector END AS head
    FROM memories_memorychunk c JOIN memories_memory m ON m.id = c.memory_id
    WHERE c.memory_id = ANY(%(memory_ids)s)
"""

# A chunk's BM25 weight (its "impact") is fixed when it is indexed, with the owner's average chunk
# length at that moment. That average counts the chunks being indexed with those already there, so
# an owner's first memories are weighed against their own lengths and not against a guessed prior
# (DEFAULT_AVG_LENGTH is used only when there is nothing to average). `reindex_all` goes further:
# it totals each owner's lengths first, so every chunk is weighed against the final average.
_BATCH_AVG = f"""
    SELECT COALESCE(
        (COALESCE(s.total_length, 0) + b.len)::float8 / NULLIF(COALESCE(s.chunk_count, 0) + b.n, 0),
        %(default_avg)s) AS avglen
    FROM (SELECT count(*) AS n, COALESCE(sum(length(body) + {TITLE_WEIGHT} * length(head)), 0) AS len
          FROM ({_FIELDS}) f) b
    LEFT JOIN memories_corpusstat s ON s.owner_id = %(owner)s
"""
_KNOWN_AVG = """
    SELECT COALESCE(
        (SELECT total_length::float8 / NULLIF(chunk_count, 0) FROM memories_corpusstat WHERE owner_id = %(owner)s),
        %(default_avg)s) AS avglen
"""

# avg is MATERIALIZED: referenced once, it would be inlined, and the planner may then rescan it (an
# aggregate over the batch's chunks) for every posting inserted.
_POSTINGS_SQL = f"""
WITH avg AS MATERIALIZED ({{avg}}
), fields AS MATERIALIZED ({_FIELDS}
), occurrences AS (
    SELECT f.owner_id, f.chunk_id, u.lexeme, COALESCE(array_length(u.positions, 1), 1)::float8 AS tf
    FROM fields f, unnest(f.body) AS u
    UNION ALL
    SELECT f.owner_id, f.chunk_id, u.lexeme, {TITLE_WEIGHT} * COALESCE(array_length(u.positions, 1), 1)
    FROM fields f, unnest(f.head) AS u
), postings AS (
    SELECT o.owner_id, o.chunk_id, o.lexeme, sum(o.tf) AS tf,
           max(length(f.body) + {TITLE_WEIGHT} * length(f.head)) AS len
    FROM occurrences o JOIN fields f ON f.chunk_id = o.chunk_id
    GROUP BY o.owner_id, o.chunk_id, o.lexeme
), inserted AS (
    INSERT INTO memories_chunkterm (owner_id, chunk_id, lexeme, tf, impact)
    SELECT p.owner_id, p.chunk_id, p.lexeme, LEAST(round(p.tf), 32767),
           p.tf * ({K1} + 1) / (p.tf + {K1} * (1 - {B} + {B} * p.len / avg.avglen))
    FROM postings p, avg
    RETURNING owner_id, lexeme
)
INSERT INTO memories_termstat (owner_id, lexeme, df)
SELECT owner_id, lexeme, count(*) FROM inserted GROUP BY owner_id, lexeme ORDER BY lexeme
ON CONFLICT (owner_id, lexeme) DO UPDATE SET df = memories_termstat.df + EXCLUDED.df
"""

_COUNT_CORPUS_SQL = f"""
INSERT INTO memories_corpusstat (owner_id, chunk_count, total_length)
SELECT %(owner)s, count(*), COALESCE(sum(length(body) + {TITLE_WEIGHT} * length(head)), 0)::bigint
FROM ({_FIELDS}) f
ON CONFLICT (owner_id) DO UPDATE SET chunk_count = memories_corpusstat.chunk_count + EXCLUDED.chunk_count,
                                     total_length = memories_corpusstat.total_length + EXCLUDED.total_length
"""

# Postings first (weighed with the average including this batch), then the batch joins the totals.
_INDEX_SQL = _POSTINGS_SQL.format(avg=_BATCH_AVG)
# reindex_all: the totals are already complete, so the postings use them as they are.
_REINDEX_SQL = _POSTINGS_SQL.format(avg=_KNOWN_AVG)

_UNINDEX_SQL = f"""
WITH gone AS (
    -- The chunk ids first, as one array: the postings are then found by their (chunk_id, lexeme) index
    -- whatever the planner believes of the tables' sizes (a join planned on stale statistics walked
    -- every posting for each memory deleted).
    DELETE FROM memories_chunkterm t
    WHERE t.chunk_id = ANY(ARRAY(SELECT c.id FROM memories_memorychunk c WHERE c.memory_id = ANY(%(memory_ids)s)))
    RETURNING t.owner_id, t.lexeme
), df AS (
    UPDATE memories_termstat s SET df = s.df - g.n
    FROM (SELECT owner_id, lexeme, count(*) AS n FROM gone GROUP BY owner_id, lexeme) g
    WHERE s.owner_id = g.owner_id AND s.lexeme = g.lexeme
    RETURNING 1
)
UPDATE memories_corpusstat s SET chunk_count = GREATEST(s.chunk_count - g.n, 0),
                                 total_length = GREATEST(s.total_length - g.len, 0)
FROM (SELECT owner_id, count(*) AS n, COALESCE(sum(length(body) + {TITLE_WEIGHT} * length(head)), 0)::bigint AS len
      FROM ({_FIELDS}) f GROUP BY owner_id) g
WHERE s.owner_id = g.owner_id
"""


def reindex_all(*, batch: int = 2000) -> None:
    """Rebuild every owner's lexical index from the chunks and titles (after the index rule changed).

    Each owner's chunk count and total length are summed first, so every chunk's weight uses the
    owner's final average chunk length (indexing in batches would weigh the first batch against
    the prior and each later one against the average of those before it)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories_chunkterm; DELETE FROM memories_termstat; DELETE FROM memories_corpusstat")
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT owner_id FROM memories_memory")
        owners = [row[0] for row in cursor.fetchall()]
    for owner_id in owners:
        _index_owner(owner_id, batch=batch)


def reindex_owner(owner_id: int, *, batch: int = 2000) -> None:
    """Rebuild one owner's lexical index the way `reindex_all` does (the final average length for
    every chunk), set-based in batches of `batch` memories; a bulk load indexes its chunks with it."""
    with connection.cursor() as cursor:
        for table in ("memories_chunkterm", "memories_termstat", "memories_corpusstat"):
            cursor.execute(f"DELETE FROM {table} WHERE owner_id = %s", [owner_id])
    _index_owner(owner_id, batch=batch)


# The owner's memories outside the trash, told by their chunks' storage layer rather than by the
# memory's trashed_at: migrations that rebuild the index run on tables from before the trash existed.
_LIVE_MEMORIES_SQL = """
SELECT m.id FROM memories_memory m WHERE m.owner_id = %s
AND NOT EXISTS (SELECT 1 FROM memories_memorychunk c WHERE c.memory_id = m.id AND c.tier = %s)
ORDER BY m.id
"""


def _index_owner(owner_id: int, *, batch: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_LIVE_MEMORIES_SQL, [owner_id, TRASH_LAYER])
        ids = [row[0] for row in cursor.fetchall()]
    with connection.cursor() as cursor:
        for start in range(0, len(ids), batch):
            cursor.execute(_COUNT_CORPUS_SQL, {"owner": owner_id, "memory_ids": ids[start : start + batch]})
        for start in range(0, len(ids), batch):
            cursor.execute(
                _REINDEX_SQL,
                {"owner": owner_id, "memory_ids": ids[start : start + batch], "default_avg": DEFAULT_AVG_LENGTH},
            )


def index_memories(*, owner_id: int, memory_ids: Sequence[int]) -> None:
    """Add the chunks of these memories (all of one owner) to the lexical index."""
    if not memory_ids:
        return
    with connection.cursor() as cursor:
        params: dict[str, int | float | list[int]] = {
            "owner": owner_id,
            "memory_ids": list(memory_ids),
            "default_avg": DEFAULT_AVG_LENGTH,
        }
        cursor.execute(_INDEX_SQL, params)
        cursor.execute(_COUNT_CORPUS_SQL, params)


def unindex_memories(*, memory_ids: Sequence[int]) -> None:
    """Remove the chunks of these memories from the lexical index (before the chunks are deleted)."""
    if not memory_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_UNINDEX_SQL, {"memory_ids": list(memory_ids)})


def query_lexemes(text: str) -> list[str]:
    """The query's terms as the index knows them (stemmed, stop words dropped), in order, unique."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY positions[1]", [TS_CONFIG, text]
        )
        return [row[0] for row in cursor.fetchall()]


def idf(*, df: int, n: int) -> float:
    """BM25's IDF, never negative: ln(1 + (N − df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (max(n - df, 0) + 0.5) / (df + 0.5))
