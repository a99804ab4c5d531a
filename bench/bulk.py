"""The bulk path of `bench_search`: load a large synthetic corpus first, index it afterwards.

Inserting a million chunks row by row, with two HNSW indexes on the chunk table and an index on
their lexical postings, is far too slow: every row walks the HNSW graph. Here, in ONE transaction:

1. the indexes that slow a load are dropped, their definitions read from `pg_indexes` first, so
   what is re-created is exactly what the migrations made (nothing is restated here);
2. the corpus is generated and sent in batches of COPY_BATCH chunks: each batch's memories by one
   COPY (their ids drawn from the table's sequence first), then its chunks by one binary COPY
   (pgvector's psycopg dumper sends each vector as 1,536 bytes instead of 384 formatted floats);
3. the lexical index is built set-based, per owner (`lexical.reindex_owner`);
4. the dropped indexes are re-created, the HNSW ones with parallel maintenance workers and enough
   `maintenance_work_mem` for the graph to fit (pgvector's notice when it does not is reported).

PostgreSQL's DDL is transactional: if the command is interrupted (Ctrl-C, a crash, a lost
connection), the transaction rolls back and the indexes are still there, as before the run; they
are never left dropped. The price: the chunk table is locked (ACCESS EXCLUSIVE) for the whole run,
so this is for a benchmark database only, never one that serves users.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable

from django.db import connection, transaction

from bench import pgmemory
from bench.synthetic import Corpus
from memories import embedding
from memories.models import Memory
from memories.search import lexical

# Indexes that cost a row-by-row load dearly and are built faster in one pass afterwards. The
# unique constraints and the b-trees used by the load itself (foreign keys, memory_id) stay.
DEFERRED_INDEXES = (
    ("memories_memorychunk", "memorychunk_hnsw_active"),
    ("memories_memorychunk", "memorychunk_hnsw_archive"),
    ("memories_chunkterm", "chunkterm_owner_lexeme_impact"),
)
# Constraints checked row by row during a load (each foreign key is a lookup per row, tens of
# millions for the postings) and validated in one set-based pass when re-added: the foreign keys of
# both tables and the postings' unique key (its index is then built by sorting).
DEFERRED_CONSTRAINT_TABLES = ("memories_memorychunk", "memories_chunkterm")
DEFERRED_UNIQUE = ("chunkterm_chunk_lexeme_unique",)
CHUNKS_PER_MEMORY = 4
COPY_BATCH = 10_000  # chunks generated and sent per COPY
LEXICAL_BATCH = 20_000  # memories per set-based statement (80,000 chunks)
# What the HNSW graph of one 384-dimension vector takes in memory while it is built (the vector,
# its neighbour lists at m=16 and pgvector's element header, about 2.3 KB), with headroom.
GRAPH_BYTES_PER_ROW = 3 * 1024
MIN_MAINTENANCE_MB = 64


def index_definitions() -> dict[str, str]:
    """The CREATE INDEX statements of the deferred indexes as they are now (from the migrations)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND (tablename, indexname) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            [[t for t, _ in DEFERRED_INDEXES], [i for _, i in DEFERRED_INDEXES]],
        )
        found = dict(cursor.fetchall())
    missing = [name for _, name in DEFERRED_INDEXES if name not in found]
    if missing:
        raise RuntimeError(f"production indexes missing before the bulk load: {', '.join(missing)} (run migrate)")
    return {name: found[name] for _, name in DEFERRED_INDEXES}


def constraint_definitions() -> list[tuple[str, str, str]]:
    """(table, name, definition) of the deferred constraints, as the migrations made them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = ANY(%s::regclass[]) AND (contype = 'f' OR conname = ANY(%s)) ORDER BY contype DESC, conname",
            [list(DEFERRED_CONSTRAINT_TABLES), list(DEFERRED_UNIQUE)],
        )
        found = cursor.fetchall()
    missing = set(DEFERRED_UNIQUE) - {name for _, name, _ in found}
    if missing:
        raise RuntimeError(f"production constraints missing before the bulk load: {', '.join(missing)} (run migrate)")
    return found


def maintenance_mb(rows: int) -> int:
    """maintenance_work_mem for an HNSW build over `rows` vectors: the graph plus headroom, at most
    half the machine's RAM."""
    ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    return int(min(max(MIN_MAINTENANCE_MB, rows * GRAPH_BYTES_PER_ROW // 2**20), ram_mb // 2))


def build_workers() -> int:
    """Parallel maintenance workers besides the leader: one per core left."""
    return max(1, (os.cpu_count() or 2) - 1)


def bulk_build(owner, chunks: int, corpus: Corpus, *, progress: Callable[[str], None]) -> dict:
    """Replace `owner`'s corpus with `chunks` synthetic chunks; returns the phase timings, the index
    sizes and PostgreSQL's memory peaks while it built."""
    from pgvector.psycopg import register_vector

    report: dict = {"mode": "bulk", "phases_s": {}, "index_mb": {}}
    phases = report["phases_s"]

    def timed(name: str, fn: Callable[[], object]):
        started = time.perf_counter()
        result = fn()
        phases[name] = round(time.perf_counter() - started, 1)
        progress(f"{name}: {phases[name]} s")
        return result

    # The old corpus goes first, in its own transaction (no index is dropped yet): its rows are then
    # dead to every transaction, so the index builds below skip them.
    with transaction.atomic(), connection.cursor() as cursor:
        timed("delete_old", lambda: _delete_owner(cursor, owner.pk))
    with transaction.atomic():
        connection.ensure_connection()
        register_vector(connection.connection)
        definitions = index_definitions()
        constraints = constraint_definitions()
        workers = build_workers()
        with connection.cursor() as cursor, pgmemory.Sampler(pgmemory.backend_pid()) as memory:
            # Django's foreign keys are deferred to the commit; the ones left in place (the
            # memories') are checked row by row instead, so no trigger events queue up for the
            # commit (and CREATE INDEX refuses a table with pending trigger events).
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for name in definitions:
                cursor.execute(f'DROP INDEX "{name}"')
            for table, name, _ in constraints:
                cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
            # Sorts and hashes of the set-based lexical build and the index builds stay in memory.
            cursor.execute("SET LOCAL work_mem = '256MB'")
            timed("load", lambda: _copy_chunks(cursor, owner.pk, chunks, corpus))
            timed("lexical", lambda: lexical.reindex_owner(owner.pk, batch=LEXICAL_BATCH))
            cursor.execute("SELECT count(*) FROM memories_memorychunk")
            rows = cursor.fetchone()[0]
            mem_mb = maintenance_mb(rows)
            cursor.execute(f"SET LOCAL maintenance_work_mem = '{mem_mb}MB'")
            cursor.execute(f"SET LOCAL max_parallel_maintenance_workers = {workers}")
            timed("constraints", lambda: _add_constraints(cursor, constraints))
            notices: list[str] = []
            handler = lambda diag: notices.append(diag.message_primary or "")  # noqa: E731
            connection.connection.add_notice_handler(handler)
            try:
                for name, statement in definitions.items():
                    timed(f"index {name}", lambda statement=statement: cursor.execute(statement))
            finally:
                connection.connection.remove_notice_handler(handler)
            for name in definitions:
                cursor.execute("SELECT pg_relation_size(%s::regclass)", [name])
                report["index_mb"][name] = round(cursor.fetchone()[0] / 2**20, 1)
        report.update(
            table_rows=rows,
            maintenance_work_mem_mb=mem_mb,
            parallel_maintenance_workers=workers,
            graph_fit_maintenance_work_mem=not any("maintenance_work_mem" in n for n in notices),
            build_notices=notices,
            memory_peaks_mb=memory.peaks,
        )
    # After the commit: VACUUM cannot run in a transaction. It sets the visibility map, which the
    # lexical index's index-only scans need (autovacuum would do the same a little later).
    with connection.cursor() as cursor:
        timed(
            "vacuum_analyze",
            lambda: cursor.execute("VACUUM (ANALYZE) memories_memorychunk, memories_chunkterm, memories_memory"),
        )
    report["build_s"] = round(sum(phases.values()), 1)
    return report


def sizes_mb() -> dict:
    """Disk taken by the search's tables and indexes (all owners), and by the whole database."""
    out: dict = {}
    with connection.cursor() as cursor:
        for key, expression in (
            ("chunk_table", "pg_table_size('memories_memorychunk')"),
            ("hnsw_active_index", "pg_relation_size('memorychunk_hnsw_active')"),
            (
                "chunk_other_indexes",
                "pg_indexes_size('memories_memorychunk') - pg_relation_size('memorychunk_hnsw_active') - pg_relation_size('memorychunk_hnsw_archive')",
            ),
            ("postings_table", "pg_table_size('memories_chunkterm')"),
            ("postings_indexes", "pg_indexes_size('memories_chunkterm')"),
            ("term_stats", "pg_total_relation_size('memories_termstat')"),
            ("memory_table", "pg_total_relation_size('memories_memory')"),
            ("database", "pg_database_size(current_database())"),
        ):
            cursor.execute(f"SELECT {expression}")
            out[key] = round(cursor.fetchone()[0] / 2**20, 1)
        cursor.execute("SELECT count(*) FROM memories_chunkterm")
        out["postings_rows"] = cursor.fetchone()[0]
    return out


def _add_constraints(cursor, constraints: list[tuple[str, str, str]]) -> None:
    for table, name, definition in constraints:
        cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')


def _delete_owner(cursor, owner_id: int) -> None:
    """The owner's old corpus, set-based (Django's collector would load every chunk)."""
    cursor.execute("DELETE FROM memories_chunkterm WHERE owner_id = %s", [owner_id])
    cursor.execute("DELETE FROM memories_termstat WHERE owner_id = %s", [owner_id])
    cursor.execute("DELETE FROM memories_corpusstat WHERE owner_id = %s", [owner_id])
    cursor.execute("DELETE FROM memories_memorychunk WHERE owner_id = %s", [owner_id])
    cursor.execute("DELETE FROM memories_memory WHERE owner_id = %s", [owner_id])


def _memory_columns() -> tuple[list[str], list]:
    """The memory table's columns (all but the id) and the values a new synthetic memory stores in
    them, as Django itself would write them (defaults, auto_now, JSON): one template row."""
    template = Memory(title="", content="(synthetic benchmark memory)", content_hash="")
    template.auto_tags = [{"tag": "upload", "confidence": 1.0}]
    template.tags = ["upload"]
    columns, values = [], []
    for field in Memory._meta.concrete_fields:
        if field.primary_key:
            continue
        columns.append(field.column)
        values.append(field.get_db_prep_save(field.pre_save(template, add=True), connection))
    return columns, values


def _insert_memories(cursor, owner_id: int, titles: list[str], *, first: int) -> list[int]:
    """One memory per title, by COPY (Django's bulk_create builds an object and a parameter list per
    row: 130 s for 250,000 memories here), with ids drawn from the table's own sequence first so the
    chunks can point at them. `first` numbers the content hashes across batches."""
    columns, template = _memory_columns()
    at = {name: columns.index(name) for name in ("owner_id", "title", "content_hash")}
    cursor.execute(
        "SELECT nextval(pg_get_serial_sequence('memories_memory', 'id')) FROM generate_series(1, %s)", [len(titles)]
    )
    ids = [row[0] for row in cursor.fetchall()]
    with cursor.copy(f"COPY memories_memory (id, {', '.join(columns)}) FROM STDIN") as copy:
        for i, (pk, title) in enumerate(zip(ids, titles, strict=True)):
            row = [pk, *template]
            row[1 + at["owner_id"]] = owner_id
            row[1 + at["title"]] = title[:80]
            row[1 + at["content_hash"]] = hashlib.sha256(f"bulk-{first + i}".encode()).hexdigest()
            copy.write_row(row)
    return ids


def _copy_chunks(cursor, owner_id: int, chunks: int, corpus: Corpus) -> None:
    """The memories and their chunks, batch by batch: the memories of a batch by COPY first (their
    ids are needed), then its chunks by one binary COPY each."""
    from pgvector import Vector

    model = embedding.model_name()
    done = 0
    for titles, texts, vectors in corpus.chunks(chunks, per_memory=CHUNKS_PER_MEMORY, batch=COPY_BATCH):
        memory_ids = _insert_memories(cursor, owner_id, titles, first=done // CHUNKS_PER_MEMORY)
        with cursor.copy(
            "COPY memories_memorychunk (owner_id, memory_id, position, text, char_start, char_end, "
            "text_hash, embedding, embedding_model, tier) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int4", "int8", "int4", "text", "int4", "int4", "varchar", "vector", "varchar", "varchar"])
            for i, text in enumerate(texts):
                copy.write_row(
                    (
                        owner_id,
                        memory_ids[i // CHUNKS_PER_MEMORY],
                        i % CHUNKS_PER_MEMORY,
                        text,
                        0,
                        len(text),
                        hashlib.sha256(text.encode()).hexdigest(),
                        Vector(vectors[i]),
                        model,
                        "hot",
                    )
                )
        done += len(texts)


def hnsw_parameters() -> dict:
    """m and ef_construction of the active HNSW index as it was built (from its reloptions)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'memorychunk_hnsw_active'")
        row = cursor.fetchone()
    options = dict(option.split("=", 1) for option in (row[0] or [])) if row else {}
    return {"m": int(options.get("m", 16)), "ef_construction": int(options.get("ef_construction", 64))}
