"""The lexical (BM25F) index in PostgreSQL: postings per chunk term, document frequencies, corpus totals.

A chunk has two fields: its text and, for a memory's first chunk, the memory's title (weighted, see
TITLE_WEIGHT).

Kept up to date in the same transaction as the chunks it describes: `index_memories` after chunks
are inserted, `unindex_memories` before they are deleted. PostgreSQL's text search configs do the
tokenising, stop-word removal and stemming: each chunk in its own language's Snowball config where
PostgreSQL has one (its terms then carry the language, "de:rechnung"), english otherwise, and CJK
runs as character pairs. A query is read in english and in each language the owner's index holds
(`query_terms`), so queries and chunks agree on terms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence
from functools import cache, partial
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection

from memories import embedding
from memories.models import TRASH_LAYER
from memories.search.questions import QUESTION_WORDS

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

# Languages (ISO 639-1, as core.language tells them) that PostgreSQL stems with a Snowball config of
# their own. A chunk in one of them is indexed with that config and its terms carry the language as a
# prefix ("ru:мюнхен"), so two languages never meet on a word they happen to stem alike (French stems
# "news" to "new"). English and every other language keep the english config and bare terms, as
# before languages were read. Variants of one language share its prefix.
SNOWBALL = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "da": "danish",
    "nl": "dutch",
    "et": "estonian",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
_VARIANTS = {"nb": "no", "nn": "no"}

# Chinese, Japanese and Korean are written without spaces between words, so PostgreSQL's parser reads
# a whole run of them as one "word" that no query ever matches in part. Such runs are indexed and
# searched as overlapping pairs of characters instead (Lucene's CJK bigram rule): 肉をくわえた犬 is
# 肉を をく くわ わえ えた た犬. A lone character stands for itself.
CJK_CLASS = "[\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]"
_CJK_RUN = re.compile(CJK_CLASS + "+")
_PREFIXED = re.compile(r"^[a-z]{2}:")
# A query of CJK text is searched by at most this many of its character pairs (a 2,000-character
# paste would otherwise be 2,000 terms).
MAX_QUERY_PAIRS = 128
_WORD = re.compile(r"[^\W\d_]+")


@cache
def stemmed_languages() -> dict[str, str]:
    """The languages of SNOWBALL whose config this PostgreSQL has (Estonian came with 17, Armenian,
    Basque, Catalan, Hindi, Serbian and Yiddish with 16): a language it lacks keeps the english
    config, and `manage.py reindex_keywords` reads it in its own once an upgrade brings it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT cfgname FROM pg_ts_config")
        configs = {row[0] for row in cursor.fetchall()}
    return {code: config for code, config in SNOWBALL.items() if config in configs}


def _sql_case(column: str, value: Callable[[str], str]) -> str:
    codes = [code for code in (*SNOWBALL, *_VARIANTS) if language_prefix(code)]
    whens = " ".join(f"WHEN '{code}' THEN {value(code)}" for code in codes)
    return f"(CASE {column} {whens} ELSE NULL END)"


def _prefix_sql(column: str) -> str:
    """SQL: the term prefix of a language code column (NULL for the english config)."""
    return _sql_case(column, lambda code: f"'{_VARIANTS.get(code, code)}'")


def _config_sql(column: str) -> str:
    """SQL: the text search config of a language code column (NULL for the english config)."""
    return _sql_case(column, lambda code: f"'{SNOWBALL[_VARIANTS.get(code, code)]}'::regconfig")


def _terms_sql(text: str, prefix: str, stored: str | None = None) -> str:
    """SQL rows (lexeme, tf) of one text: its words stemmed in its language's config and prefixed, or
    in english (`stored`, the text's english tsvector where one is kept), then its CJK runs as
    character pairs, the runs read as spaces by the word parser (see words_of)."""
    words = f"regexp_replace({text}, '{CJK_CLASS}+', ' ', 'g')"
    english = f"to_tsvector('{TS_CONFIG}', {words})"
    if stored:
        english = f"CASE WHEN {text} ~ '{CJK_CLASS}' THEN {english} ELSE {stored} END"
    return f"""(
        SELECT CASE WHEN {prefix} IS NULL THEN u.lexeme ELSE {prefix} || ':' || u.lexeme END AS lexeme,
               COALESCE(array_length(u.positions, 1), 1)::float8 AS tf
        FROM unnest(CASE WHEN {prefix} IS NULL THEN {english} ELSE to_tsvector({_config_sql("f.language")}, {words}) END) AS u
        UNION ALL
        SELECT substr(r.run[1], i, 2), count(*)::float8
        FROM regexp_matches({text}, '{CJK_CLASS}+', 'g') AS r(run),
             generate_series(1, GREATEST(char_length(r.run[1]) - 1, 1)) AS i
        GROUP BY 1
    )"""


def _fields_sql(by_language: bool) -> str:
    """SQL CTEs `fields` (the chunks of %(memory_ids)s with what their terms are read from), `terms`
    (owner_id, chunk_id, lexeme, tf, weight: a title's terms count TITLE_WEIGHT times) and `lengths`
    (each chunk's weighted length in distinct terms). Used by index and unindex, which must agree.
    Without `by_language` (migrations that run on a schema from before languages were read) every
    chunk takes the english config."""
    language = "c.language" if by_language else "NULL::text"
    return f"""fields AS MATERIALIZED (
    SELECT c.owner_id, c.id AS chunk_id, c.text, c.search_vector, {language} AS language,
           c.position = 0 AND NOT {_OPENS_WITH_TITLE} AS titled, m.title
    FROM memories_memorychunk c JOIN memories_memory m ON m.id = c.memory_id
    WHERE c.memory_id = ANY(%(memory_ids)s)
), terms AS MATERIALIZED (
    SELECT f.owner_id, f.chunk_id, b.lexeme, b.tf, 1.0::float8 AS weight
    FROM fields f, LATERAL {_terms_sql("f.text", _prefix_sql("f.language"), "f.search_vector")} AS b
    UNION ALL
    SELECT f.owner_id, f.chunk_id, h.lexeme, {TITLE_WEIGHT} * h.tf, {TITLE_WEIGHT}
    FROM fields f, LATERAL {_terms_sql("f.title", _prefix_sql("f.language"))} AS h
    WHERE f.titled
), lengths AS MATERIALIZED (
    SELECT f.owner_id, f.chunk_id, f.language, COALESCE(sum(t.weight), 0)::float8 AS len
    FROM fields f LEFT JOIN terms t ON t.chunk_id = f.chunk_id
    GROUP BY f.owner_id, f.chunk_id, f.language
)"""


# A chunk's BM25 weight (its "impact") is fixed when it is indexed, with the owner's average chunk
# length at that moment. That average counts the chunks being indexed with those already there, so
# an owner's first memories are weighed against their own lengths and not against a guessed prior
# (DEFAULT_AVG_LENGTH is used only when there is nothing to average). `reindex_all` goes further:
# it totals each owner's lengths first, so every chunk is weighed against the final average.
_BATCH_AVG = """
    SELECT COALESCE(
        (COALESCE(s.total_length, 0) + b.len)::float8 / NULLIF(COALESCE(s.chunk_count, 0) + b.n, 0),
        %(default_avg)s) AS avglen
    FROM (SELECT count(*) AS n, COALESCE(sum(len), 0) AS len FROM lengths) b
    LEFT JOIN memories_corpusstat s ON s.owner_id = %(owner)s
"""
_KNOWN_AVG = """
    SELECT COALESCE(
        (SELECT total_length::float8 / NULLIF(chunk_count, 0) FROM memories_corpusstat WHERE owner_id = %(owner)s),
        %(default_avg)s) AS avglen
"""

# avg is MATERIALIZED: referenced once, it would be inlined, and the planner may then rescan it (an
# aggregate over the batch's chunks) for every posting inserted.
_POSTINGS_SQL = """
WITH {fields}, avg AS MATERIALIZED ({avg}
), postings AS (
    SELECT t.owner_id, t.chunk_id, t.lexeme, sum(t.tf) AS tf FROM terms t GROUP BY t.owner_id, t.chunk_id, t.lexeme
), inserted AS (
    INSERT INTO memories_chunkterm (owner_id, chunk_id, lexeme, tf, impact)
    SELECT p.owner_id, p.chunk_id, p.lexeme, LEAST(round(p.tf), 32767),
           p.tf * ({k1} + 1) / (p.tf + {k1} * (1 - {b} + {b} * l.len / avg.avglen))
    FROM postings p JOIN lengths l ON l.chunk_id = p.chunk_id, avg
    RETURNING owner_id, lexeme
)
INSERT INTO memories_termstat (owner_id, lexeme, df)
SELECT owner_id, lexeme, count(*) FROM inserted GROUP BY owner_id, lexeme ORDER BY lexeme
ON CONFLICT (owner_id, lexeme) DO UPDATE SET df = memories_termstat.df + EXCLUDED.df
"""

# The totals, and (with languages) the prefixes the owner's index holds, which a query is read in.
_COUNT_CORPUS_SQL = """
WITH {fields}
INSERT INTO memories_corpusstat (owner_id, chunk_count, total_length{languages_column})
SELECT %(owner)s, count(*), COALESCE(sum(len), 0)::bigint{languages_value} FROM lengths
ON CONFLICT (owner_id) DO UPDATE SET chunk_count = memories_corpusstat.chunk_count + EXCLUDED.chunk_count,
                                     total_length = memories_corpusstat.total_length + EXCLUDED.total_length{languages_update}
"""

_UNINDEX_SQL = """
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
), {fields}
UPDATE memories_corpusstat s SET chunk_count = GREATEST(s.chunk_count - g.n, 0),
                                 total_length = GREATEST(s.total_length - g.len, 0)
FROM (SELECT owner_id, count(*) AS n, COALESCE(sum(len), 0)::bigint AS len FROM lengths GROUP BY owner_id) g
WHERE s.owner_id = g.owner_id
"""


@cache
def _statements(by_language: bool) -> dict[str, str]:
    """The index statements, with each chunk read in its language or (migrations on an old schema)
    all in english."""
    fields = _fields_sql(by_language)
    languages = (
        (
            ", languages",
            f", ARRAY(SELECT DISTINCT {_prefix_sql('l.language')} FROM lengths l "
            f"WHERE {_prefix_sql('l.language')} IS NOT NULL)",
            ",\n        languages = ARRAY(SELECT DISTINCT unnest(memories_corpusstat.languages || EXCLUDED.languages) "
            "ORDER BY 1)",
        )
        if by_language
        else ("", "", "")
    )
    postings = partial(_POSTINGS_SQL.format, fields=fields, k1=K1, b=B)
    return {
        # Postings first (weighed with the average including this batch), then the batch joins the totals.
        "index": postings(avg=_BATCH_AVG),
        # reindex: the totals are already complete, so the postings use them as they are.
        "reindex": postings(avg=_KNOWN_AVG),
        "count": _COUNT_CORPUS_SQL.format(
            fields=fields,
            languages_column=languages[0],
            languages_value=languages[1],
            languages_update=languages[2],
        ),
        "unindex": _UNINDEX_SQL.format(fields=fields),
    }


def reindex_all(*, batch: int = 2000, by_language: bool = True) -> None:
    """Rebuild every owner's lexical index from the chunks and titles (after the index rule changed).

    Each owner's chunk count and total length are summed first, so every chunk's weight uses the
    owner's final average chunk length (indexing in batches would weigh the first batch against
    the prior and each later one against the average of those before it). `by_language=False` is for
    migrations that run on a schema from before languages were read."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories_chunkterm; DELETE FROM memories_termstat; DELETE FROM memories_corpusstat")
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT owner_id FROM memories_memory")
        owners = [row[0] for row in cursor.fetchall()]
    for owner_id in owners:
        _index_owner(owner_id, batch=batch, by_language=by_language)


def reindex_owner(owner_id: int, *, batch: int = 2000) -> None:
    """Rebuild one owner's lexical index the way `reindex_all` does (the final average length for
    every chunk), set-based in batches of `batch` memories; a bulk load indexes its chunks with it.

    The owner's user row is locked first (FOR UPDATE) until the caller's transaction ends. Every write
    to the index inserts rows that reference it, and so holds a KEY SHARE lock on it: the rebuild waits
    for writes in flight to commit, and new ones wait for the rebuild, which would otherwise miss their
    uncommitted postings when it deletes and then index them twice."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {get_user_model()._meta.db_table} WHERE id = %s FOR UPDATE", [owner_id])
        for table in ("memories_chunkterm", "memories_termstat", "memories_corpusstat"):
            cursor.execute(f"DELETE FROM {table} WHERE owner_id = %s", [owner_id])
    _index_owner(owner_id, batch=batch, by_language=True)


# The owner's memories outside the trash, told by their chunks' storage layer rather than by the
# memory's trashed_at: migrations that rebuild the index run on tables from before the trash existed.
_LIVE_MEMORIES_SQL = """
SELECT m.id FROM memories_memory m WHERE m.owner_id = %s
AND NOT EXISTS (SELECT 1 FROM memories_memorychunk c WHERE c.memory_id = m.id AND c.tier = %s)
ORDER BY m.id
"""


def _index_owner(owner_id: int, *, batch: int, by_language: bool) -> None:
    statements = _statements(by_language)
    with connection.cursor() as cursor:
        cursor.execute(_LIVE_MEMORIES_SQL, [owner_id, TRASH_LAYER])
        ids = [row[0] for row in cursor.fetchall()]
    with connection.cursor() as cursor:
        for start in range(0, len(ids), batch):
            cursor.execute(statements["count"], {"owner": owner_id, "memory_ids": ids[start : start + batch]})
        for start in range(0, len(ids), batch):
            cursor.execute(
                statements["reindex"],
                {"owner": owner_id, "memory_ids": ids[start : start + batch], "default_avg": DEFAULT_AVG_LENGTH},
            )


def index_memories(*, owner_id: int, memory_ids: Sequence[int], by_language: bool = True) -> None:
    """Add the chunks of these memories (all of one owner) to the lexical index."""
    if not memory_ids:
        return
    statements = _statements(by_language)
    with connection.cursor() as cursor:
        params: dict[str, int | float | list[int]] = {
            "owner": owner_id,
            "memory_ids": list(memory_ids),
            "default_avg": DEFAULT_AVG_LENGTH,
        }
        cursor.execute(statements["index"], params)
        cursor.execute(statements["count"], params)


def unindex_memories(*, memory_ids: Sequence[int]) -> None:
    """Remove the chunks of these memories from the lexical index (before the chunks are deleted, or
    before their language or title changes: the lengths subtracted are read as they were added)."""
    if not memory_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_statements(True)["unindex"], {"memory_ids": list(memory_ids)})


# A lower-case letter between spaces ("d" in "hot loops in a d" as it is typed), not one of CJK's.
_SPACED_LETTER = rf"[^\W\d_{CJK_CLASS[1:-1]}]"
_LONE_LETTER = re.compile(rf"(?<!\S){_SPACED_LETTER}(?!\S)")
_LONGER_WORD = re.compile(rf"{_SPACED_LETTER}{{2}}|\d|{CJK_CLASS}")


def without_lone_letters(query: str) -> str:
    """The query without its lower-case letters that stand alone, when it has longer words or numbers:
    "hot loops in a d" while it is typed found every passage with a stray "d", and as the rarest term
    the letter outweighed the words asked for. A capital is meant ("vitamin D", "T cells", "Plan B"),
    and so is a letter joined to a word ("α-synuclein", "E. coli", "l'homme"); a query of letters
    alone ("c") keeps them."""
    stripped = _LONE_LETTER.sub(lambda match: " " if match.group().islower() else match.group(), query)
    return stripped if _LONGER_WORD.search(stripped) else query


def needs_readings(query: str, languages: Sequence[str], query_language: str) -> bool:
    """Whether a query must be read by `query_terms` rather than in english alone: the owner's index
    holds other languages, the query is in one, or it holds CJK."""
    return bool(languages) or language_prefix(query_language) is not None or bool(_CJK_RUN.search(query))


_READINGS_SQL = """
SELECT r.prefix, r.lexeme, r.pos, COALESCE(s.df, 0)
FROM (
    SELECT l.prefix, u.lexeme, p.pos
    FROM unnest(%(prefixes)s::text[], %(configs)s::text[]) AS l(prefix, cfg),
         LATERAL unnest(to_tsvector(l.cfg::regconfig, %(query)s)) AS u,
         LATERAL unnest(u.positions) AS p(pos)
) r
LEFT JOIN memories_termstat s ON s.owner_id = %(owner)s AND s.lexeme = CASE
    WHEN r.prefix = '' THEN r.lexeme ELSE rtrim(r.prefix, '~') || ':' || r.lexeme END
"""
# A word's own form, lower-cased, is also tried in each language (as the prefix with "~"): Snowball
# does not stem every form of a name alike, and a form with no ending is often what it leaves of the
# others ("Мюнхен" stems to мюнх, while "в Мюнхене" stems to мюнхен).
_OWN_FORM = "~"


class QueryWords(NamedTuple):
    """A query as the owner's index reads it: its words, a group of terms each (query_terms), and
    whether it reads as another language than English although the detector could not tell which
    (see foreign_function_words)."""

    groups: list[list[str]]
    foreign: bool = False


def query_terms(owner_id: int, query: str, *, languages: Sequence[str], query_language: str = "") -> list[list[str]]:
    """The query's words as this owner's index holds them, a group of terms each: every word read in
    english and in every language the index holds (and the query's own), with the readings the index
    holds (see choose_readings), then its CJK runs' character pairs, one word each."""
    return read_words(owner_id, query, languages=languages, query_language=query_language).groups


def read_words(owner_id: int, query: str, *, languages: Sequence[str], query_language: str = "") -> QueryWords:
    """query_terms, and whether the query reads as another language than English: then its little
    words of that language ("de", "la") are not words to find either."""
    # A language listed that this server has no config for (a database moved to an older one) is not read.
    listed = {language for language in languages if language_prefix(language)}
    prefixes = ["", *sorted({*listed, *filter(None, [language_prefix(query_language)])})]
    read = [(p, TS_CONFIG) for p in prefixes[:1]]
    read += [(p + suffix, cfg) for p in prefixes[1:] for suffix, cfg in (("", SNOWBALL[p]), (_OWN_FORM, "simple"))]
    with connection.cursor() as cursor:
        cursor.execute(
            _READINGS_SQL,
            {
                "prefixes": [p for p, _ in read],
                "configs": [c for _, c in read],
                "query": words_of(query),
                "owner": owner_id,
            },
        )
        readings = cursor.fetchall()
    query_prefix = language_prefix(query_language) or ""
    # A capitalised word past the first is taken as a name, whatever it reads as ("Wo" is also a name).
    words = _WORD.findall(words_of(query))
    question_words = QUESTION_WORDS.get(query_prefix, frozenset())
    dropped = frozenset(
        w.lower() for i, w in enumerate(words) if w.lower() in question_words and (i == 0 or not w[:1].isupper())
    )
    foreign = (
        foreign_function_words(readings, prefixes=prefixes, names={w.lower() for w in words[1:] if w[:1].isupper()})
        if not query_prefix and query_language != "en"
        else frozenset()
    )
    groups = choose_readings(
        readings, prefixes=prefixes, query_prefix=query_prefix, query_stop_words=dropped, skip=foreign
    )
    held = {term for group in groups for term in group}
    return QueryWords(
        groups + [[pair] for pair in cjk_pairs(query)[:MAX_QUERY_PAIRS] if pair not in held], foreign=bool(foreign)
    )


def foreign_function_words(
    readings, *, prefixes: Sequence[str], names: Collection[str] = frozenset()
) -> frozenset[int]:
    """The positions of a query's little words of another language ("de", "la"), when the query
    reads as that language although the language detector could not tell (a short query: "receta de
    paella valenciana"); else none. It does when:

    - some word is a stop word of a language the owner's index holds and no word is an English one
      ("for", "a" make "Hetzner invoice for a dedicated server" English), and
    - most of its other words, names aside, are words the embedding model does not know whole (it
      reads "van rental prices" or "pasta al dente timing" as English words, but not "receta" or
      "valenciana").

    Such a query's meaning is not what the model reads (the good-match rule then asks for its words),
    and its little words are no words to find: "de" matched every Spanish passage."""
    found: dict[int, set[str]] = {}
    forms: dict[int, str] = {}
    for prefix, lexeme, position, _ in readings:
        if prefix.endswith(_OWN_FORM):
            forms[position] = lexeme
        else:
            found.setdefault(position, set()).add(prefix)
    others = [prefix for prefix in prefixes if prefix]
    if not others:
        return frozenset()
    little, content = set(), []
    for position in forms.keys() | found.keys():
        held = found.get(position, set())
        if "" not in held:
            if forms.get(position) not in names:
                return frozenset()  # an English stop word: the query is English
            continue
        if any(prefix not in held for prefix in others):
            little.add(position)
        elif forms.get(position) not in names:
            content.append(forms.get(position, ""))
    vocabulary = embedding.model_vocabulary()
    if not little or not content or not vocabulary:
        return frozenset()
    known = sum(word in vocabulary for word in content)
    return frozenset(little) if known * 2 < len(content) else frozenset()


def choose_readings(
    readings,
    *,
    prefixes: Sequence[str],
    query_prefix: str = "",
    query_stop_words: frozenset[str] = frozenset(),
    skip: frozenset[int] = frozenset(),
) -> list[list[str]]:
    """The terms of each word of a query, from its readings: rows of (prefix, lexeme, position, df)
    for each language read ("" is english; a language with no row at a position has that word as a
    stop word; a prefix ending in "~" is the word's own form in that language, an alternative to its
    stem). One group of terms per word, in order:

    - a stop word of the query's own language is not a word to find ("в", "le", "die"), nor are the
      positions in `skip` (foreign_function_words);
    - nor is a word of `query_stop_words` (its own form in the query's language): the query
      language's question words, which Snowball keeps ("wer", "wann", "combien"), would otherwise
      weigh as the rarest words of a query that asks;
    - otherwise every reading the owner's index holds, most frequent first: the word is found in
      whichever language and form the owner wrote it (an English "system" and a German "System"),
      and counts once (the search statement scores a group as one word);
    - a word no reading finds is dropped when some language of the owner calls it a stop word;
    - otherwise its english reading stays, a word the index does not hold (it lowers the share of the
      query found, as any missing word does).
    """
    by_position: dict[int, dict[str, tuple[str, int]]] = {}
    own_forms: dict[tuple[int, str], tuple[str, int]] = {}
    for prefix, lexeme, position, df in readings:
        if _CJK_RUN.search(lexeme):
            continue  # read as pairs instead
        if prefix.endswith(_OWN_FORM):
            own_forms[(position, prefix.rstrip(_OWN_FORM))] = (lexeme, df)
        else:
            by_position.setdefault(position, {})[prefix] = (lexeme, df)
    groups: list[list[str]] = []
    seen: set[str] = set()
    for position in sorted(by_position):
        found = by_position[position]
        stop_in = [prefix for prefix in prefixes if prefix not in found]
        if query_prefix in stop_in or position in skip:
            continue
        if own_forms.get((position, query_prefix), ("", 0))[0] in query_stop_words:
            continue
        candidates = [(df, _term(prefix, lexeme)) for prefix, (lexeme, df) in found.items()]
        candidates += [
            (df, _term(prefix, lexeme))
            for (at, prefix), (lexeme, df) in own_forms.items()
            if at == position and prefix in found
        ]
        ordered = sorted(candidates, key=lambda candidate: (-candidate[0], candidate[1]))
        group = list(dict.fromkeys(term for df, term in ordered if df > 0))
        if not group:
            if stop_in:
                continue
            prefix = "" if "" in found else min(found)
            group = [_term(prefix, found[prefix][0])]
        group = [term for term in group if term not in seen]
        if group:
            seen.update(group)
            groups.append(group)
    return groups


def _term(prefix: str, lexeme: str) -> str:
    return f"{prefix}:{lexeme}" if prefix else lexeme


def words_of(text: str) -> str:
    """The text with its CJK runs as spaces, for PostgreSQL's parser: it reads "Pythonの本" as one
    word, which would hide "Python"; the runs are read as pairs (cjk_pairs) instead."""
    return _CJK_RUN.sub(" ", text)


def cjk_pairs(text: str) -> list[str]:
    """The overlapping character pairs of a text's CJK runs, in order, unique (a lone character alone)."""
    pairs: list[str] = []
    for run in _CJK_RUN.findall(text):
        for pair in [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]:
            if pair not in pairs:
                pairs.append(pair)
    return pairs


def display_term(term: str) -> str:
    """A term as a reader sees it: without its language prefix."""
    return _PREFIXED.sub("", term)


def is_cjk(term: str) -> bool:
    """Whether a term is a CJK character pair (matched inside words, not at their start)."""
    return bool(_CJK_RUN.match(term))


def language_prefix(language: str) -> str | None:
    """The term prefix of a language code, None for the english config (and for a language this
    PostgreSQL has no config for)."""
    code = _VARIANTS.get(language, language)
    return code if code in stemmed_languages() else None


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
