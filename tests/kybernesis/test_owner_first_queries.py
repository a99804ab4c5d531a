"""Every production query that touches the chunk tables (memories_memorychunk, and its lexical
postings in memories_chunkterm) restricts them by owner: the shape a split of those tables by owner
(hash partitions, a Citus distribution column) needs to reach one partition or shard (docs/scaling.md,
"Past one database") -- except a short list of lookups by another key, each named below with the change
the split brings to it.

The statements are recorded with their call sites while the product is used end to end (the API,
the memory pages, export and import, a sleep cycle that moves a tier, chat). Each one is then
EXPLAINed, and every scan of a chunk table in its plan must carry an owner_id condition of its own
(a constant, or a join parameter) or be joined on owner_id. Reading the plan, not the SQL text,
means an owner_id that filters some other table of the statement does not count for the chunks."""

from __future__ import annotations

import json
import re
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

import psycopg
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from memories.models import Memory
from tests.memories.helpers import age

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
APPS = {"core", "memories", "graph", "sleep", "connectors", "portability", "kybernesis"}
CHUNK_TABLES = ("memories_memorychunk", "memories_chunkterm")
# Statements of Django's delete collector. Deleting a memory, ON DELETE CASCADE looks its chunks up
# by memory_id, deletes them by primary key and deletes their postings by chunk id (the lexical index
# already removed them). Correct on a split table too; each visits every partition's index. The plan
# replaces them with owner-scoped deletes.
CASCADE_COLLECTOR = (
    'SELECT "memories_memorychunk"."id" FROM "memories_memorychunk" WHERE "memories_memorychunk"."memory_id" IN',
    'DELETE FROM "memories_memorychunk" WHERE "memories_memorychunk"."id" IN',
    'DELETE FROM "memories_chunkterm" WHERE "memories_chunkterm"."chunk_id" IN',
)
# Scans that find chunks of one owner by another key (call site, table, the key in the scan's or its
# join's condition). They gain an owner_id condition with the split, when the tables' unique keys
# start with owner_id (a partitioned table's must contain it): today a second, redundant owner_id
# condition lets the planner pick the owner index and read all of a large owner's chunks or postings
# when statistics are missing (measured: a 500-memory unindex read 222,606 postings of the owner).
BY_ANOTHER_KEY = {
    # the batch's chunks by memory id (the memories of the one owner being indexed)
    ("memories.search.lexical:index_memories", "memories_memorychunk"): "memory_id",
    ("memories.search.lexical:unindex_memories", "memories_memorychunk"): "memory_id",
    # and their postings by chunk id
    ("memories.search.lexical:unindex_memories", "memories_chunkterm"): "chunk_id",
    # an export batch's chunk vectors, by the memory ids of the owner's batch
    ("portability.services.export:_chunk_vectors", "memories_memorychunk"): "memory_id",
    # chunks follow their memory's new tier, by memory id
    ("memories.services.tiers:memories_retier", "memories_memorychunk"): "memory_id",
    # a search's candidates (found in the owner's rows on both sides), each read by its primary key
    ("memories.search.statement:search_candidates", "memories_memorychunk"): "id",
}
# Where production code reads or writes chunks: the tour must reach every one of them, or the test
# would pass on the shapes it never saw (module:function of the innermost project frame).
CALL_SITES = {
    "memories.search.statement:search_candidates",  # the search statement (vector, lexical, metadata CTEs)
    "memories.search.statement:passage_details",  # the returned results' chunk texts, for snippets
    "memories.search.lexical:index_memories",  # postings, term and corpus statistics of new chunks
    "memories.search.lexical:unindex_memories",  # and their removal before chunks go
    "memories.services.memory:_create",  # chunk rows of new memories
    "memories.services.memory:_replace_chunks",  # an edit re-chunks
    "memories.services.trash:write",  # memory_delete moves the chunks to the trash layer
    "memories.services.tiers:memories_retier",  # chunks follow their memory's tier
    "portability.services.export:_chunk_vectors",  # export with vectors
    "portability.services.import_:_insert",  # import: chunk rows
    "memories.selectors:memory_get",  # a memory with its chunk count
    "memories.selectors:memory_chunk_page",  # the memory page's chunks
    "memories.selectors:memory_related",  # a chat message's related memories
    "memories.search.answers:_candidate_sentences",  # the sentences an answer may cite
    "memories.views:memory_open",  # a search result's link to its chunk
    "graph.services.ingest:graph_extract_memories",  # entity extraction reads the chunks
    "graph.services.ingest:_store_owner_graph",  # and checks the chunks its mentions name
    "graph.services.linkevidence:__init__",  # memory links: centroids of each memory's chunks (Neighbourhoods)
}
OWNER_CONDITION = re.compile(r"\bowner_id\s*=|=\s*\(?\w*\.?owner_id\b")
LEADING_SETTINGS = re.compile(r"^(?:SET\s+LOCAL\s[^;]*;\s*)+", re.IGNORECASE)
JOIN_CONDITIONS = ("Hash Cond", "Merge Cond", "Join Filter")
SCAN_CONDITIONS = ("Filter", "Index Cond", "Recheck Cond", "TID Cond")
INSERT_INTO_CHUNKS = re.compile(
    r'(?:INSERT INTO|COPY) "?(memories_memorychunk|memories_chunkterm)"?\s*(?:AS \w+\s*)?\(([^)]*)\)', re.IGNORECASE
)
# Helpers that write on behalf of their caller: the statement is named after the caller
# (chunk_copy's COPY stores the chunks of a create, a re-chunk and an import alike).
ON_BEHALF = {Path("memories/services/chunk_copy.py")}


@dataclass
class Statement:
    sql: str
    params: object
    many: bool
    site: str


def call_site() -> str:
    """module:function of the innermost frame in the project's own code."""
    for frame in reversed(traceback.extract_stack()):
        try:
            relative = Path(frame.filename).resolve().relative_to(ROOT)
        except ValueError:
            continue
        if relative.parts[0] in APPS and relative not in ON_BEHALF:
            return f"{'.'.join(relative.with_suffix('').parts)}:{frame.name}"
    return "(outside the project)"


class Recorder:
    def __init__(self):
        self.statements: list[Statement] = []

    def __call__(self, execute, sql, params, many, context):
        self.statements.append(Statement(sql, params, many, call_site()))
        return execute(sql, params, many, context)

    def recording_copies(self, monkeypatch) -> None:
        """A COPY goes by the cursor's copy(), which Django's execute wrappers do not see."""
        copy = psycopg.Cursor.copy

        def recorded(cursor, statement, *args, **kwargs):
            self.statements.append(Statement(str(statement), None, False, call_site()))
            return copy(cursor, statement, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "copy", recorded)


def touches_chunks(sql: str) -> bool:
    return any(table in sql for table in CHUNK_TABLES)


def _conditions(node: dict, keys) -> str:
    return " ".join(str(node[key]) for key in keys if key in node)


def _index_conditions(node: dict) -> str:
    """A bitmap heap scan's conditions sit on the bitmap index scans (and their ANDs, ORs) below it."""
    return " ".join(
        _conditions(child, ("Index Cond",)) + " " + _index_conditions(child)
        for child in node.get("Plans", [])
        if child["Node Type"] in ("Bitmap Index Scan", "BitmapAnd", "BitmapOr")
    )


def unscoped_scans(node: dict, joins: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(table, conditions) of each scan of a chunk table in this plan that no owner_id condition
    restricts: neither its own conditions nor those of a join above it that names its owner_id. The
    conditions are the scan's own and those joins' that name one of its columns."""
    found = []
    table = node.get("Relation Name")
    if table in CHUNK_TABLES and node["Node Type"] != "ModifyTable":
        own = _conditions(node, SCAN_CONDITIONS)
        if node["Node Type"] == "Bitmap Heap Scan":
            own += " " + _index_conditions(node)
        alias = re.escape(node.get("Alias", table))
        joined = " ".join(condition for condition in joins if re.search(rf"\b{alias}\.\w+", condition))
        if not OWNER_CONDITION.search(own) and not re.search(rf"\b{alias}\.owner_id\b", joined):
            found.append((table, f"{node['Node Type']} on {table} {node.get('Alias', '')}: {own} {joined}".strip()))
    here = _conditions(node, JOIN_CONDITIONS)
    for child in node.get("Plans", []):
        found += unscoped_scans(child, (*joins, here) if here else joins)
    return found


def explain(statement: Statement) -> dict:
    """The plan the statement gets on a large table. On a test's few rows a sequential scan is the
    cheapest plan whatever the conditions, and whether the planner takes it depends on when
    autovacuum last analysed the table (a plan may read all postings with the chunk index only on
    the inner side of a nested loop); with sequential scans off, the conditions the statement
    really has are what restricts each scan."""
    params = statement.params[0] if statement.many else statement.params
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute("EXPLAIN (FORMAT JSON) " + statement.sql, params)
            plan = cursor.fetchone()[0]
        finally:
            cursor.execute("RESET enable_seqscan")
    return (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]


def names_key(scan: str, key: str) -> bool:
    """Whether a scan's conditions restrict it by `key`, on either side: "memory_id = ANY(...)", or
    "v.id = c.memory_id" where a plan joins a list of ids to the chunks."""
    return bool(re.search(rf"\b{key}\s*=|=\s*\(?\w*\.?{key}\b", scan))


def problems_of(statement: Statement, excused: set | None = None) -> list[str]:
    """Why this statement on the chunk tables does not name the owner (empty when it does). The
    exceptions of BY_ANOTHER_KEY it falls under are added to `excused`."""
    # The search sends its SET LOCALs and its statement as one query string: the statement is checked.
    sql = LEADING_SETTINGS.sub("", statement.sql.strip())
    statement = replace(statement, sql=sql)
    if sql.startswith(CASCADE_COLLECTOR):
        return []
    problems = [
        f"rows written to {table} without owner_id"
        for table, columns in INSERT_INTO_CHUNKS.findall(sql)
        if "owner_id" not in columns
    ]
    if sql.upper().startswith("COPY"):
        # A COPY into a table writes the rows it is given and reads none: the columns are what counts.
        return problems if INSERT_INTO_CHUNKS.match(sql) else [f"COPY of unknown shape: {sql[:80]}"]
    if not re.match(r"(SELECT|WITH|INSERT|UPDATE|DELETE)\b", sql, re.IGNORECASE):
        return [*problems, "not a statement EXPLAIN can check"]
    for table, scan in unscoped_scans(explain(statement)):
        key = BY_ANOTHER_KEY.get((statement.site, table))
        if key is None or not names_key(scan, key):
            problems.append(scan)
        elif excused is not None:
            excused.add((statement.site, table))
    return problems


def use_everything(api, other_api, user) -> None:
    """Everything that reads or writes chunks: create, batch, search both ways, the memory's API and
    page, edit, pin, export and import, a sleep cycle that moves tiers, chat, delete."""
    ids = []
    for i, text in enumerate(
        [
            "Ada Lovelace wrote the first program for the Analytical Engine in London.",
            "Grace Hopper built the first compiler; she worked on COBOL in Arlington.",
            "The Analytical Engine by Charles Babbage was never finished in London.",
        ]
    ):
        response = api.post("/api/v1/memories", {"title": f"Note {i}", "content": text})
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    batch = api.post("/api/v1/memories/batch", {"items": [{"content": "Alan Turing and the Bombe at Bletchley."}]})
    assert batch.status_code == 201, batch.content
    old = batch.json()["items"][0]["id"]
    browser = Client()
    browser.force_login(user)
    for call in (
        lambda: api.get("/api/v1/search", {"q": "first compiler"}),
        lambda: api.post("/api/v1/search", {"query": "Analytical Engine London", "groupBy": "memory"}),
        lambda: api.get(f"/api/v1/memories/{ids[0]}"),
        lambda: api.get("/api/v1/memories"),
        lambda: browser.get(f"/memories/{ids[0]}/"),
        lambda: browser.get(f"/memories/{ids[0]}/open", {"chunk": "0"}),
        lambda: api.patch(f"/api/v1/memories/{ids[1]}", {"content": "Grace Hopper found a moth in the Mark II."}),
        lambda: api.post(f"/api/v1/memories/{ids[2]}/pin"),
    ):
        response = call()
        assert response.status_code < 400, response.content
    export = api.get("/api/v1/export")
    assert export.status_code == 200
    archive = b"".join(export.streaming_content)
    imported = Client().post(
        "/api/v1/import",
        {"file": SimpleUploadedFile("export.zip", archive, content_type="application/zip")},
        HTTP_AUTHORIZATION=f"Bearer {other_api.token}",
    )
    assert imported.status_code == 202, imported.content
    # A memory nobody opened for months moves to the archive in the cycle, and its chunks with it.
    age(Memory.objects.get(pk=old), days=400, priority=0.0)
    for call in (
        lambda: api.post("/api/v1/sleep/runs", {}),
        lambda: api.post("/api/v1/chat/messages", {"content": "Who wrote the first program?"}),
        lambda: api.delete(f"/api/v1/memories/{ids[0]}"),
    ):
        response = call()
        assert response.status_code < 400, response.content


def test_every_query_on_the_chunk_tables_filters_by_owner(api, other_api, user, monkeypatch):
    recorder = Recorder()
    recorder.recording_copies(monkeypatch)
    with connection.execute_wrapper(recorder):
        use_everything(api, other_api, user)

    chunk_statements = [s for s in recorder.statements if touches_chunks(s.sql)]
    assert CALL_SITES - {s.site for s in chunk_statements} == set()  # the tour reached every one
    unscoped, excused = {}, set()
    for statement in chunk_statements:
        if problems := problems_of(statement, excused):
            unscoped.setdefault(statement.site, []).append((problems, " ".join(statement.sql.split())[:300]))
    assert unscoped == {}
    # The list of exceptions is exact: one that no longer applies is struck off (and from docs/scaling.md,
    # "The owner-first test").
    assert set(BY_ANOTHER_KEY) - excused == set()


@pytest.mark.django_db
def test_the_check_flags_a_scan_without_the_owner_and_passes_one_with_it():
    """The check is not vacuous: a chunk read by memory id alone is flagged, through a join too,
    and the same read with the owner passes."""
    unscoped = Statement('SELECT id FROM "memories_memorychunk" WHERE memory_id = %s', [1], False, "x:y")
    joined = Statement(
        'SELECT t.lexeme FROM "memories_chunkterm" t JOIN "memories_memorychunk" c ON c.id = t.chunk_id'
        " WHERE c.memory_id = %s",
        [1],
        False,
        "x:y",
    )
    scoped = Statement(
        'SELECT id FROM "memories_memorychunk" WHERE owner_id = %s AND memory_id = %s', [1, 1], False, "x:y"
    )
    assert problems_of(unscoped)
    assert any("memories_chunkterm" in problem for problem in problems_of(joined))
    assert problems_of(scoped) == []


def test_the_check_reads_the_columns_of_a_copy():
    """A COPY of chunks is checked by its column list (it cannot be EXPLAINed)."""
    without = Statement(
        'COPY memories_memorychunk ("memory_id", "text") FROM STDIN (FORMAT BINARY)', None, False, "x:y"
    )
    with_owner = replace(without, sql='COPY memories_memorychunk ("owner_id", "memory_id") FROM STDIN (FORMAT BINARY)')
    assert problems_of(without) == ["rows written to memories_memorychunk without owner_id"]
    assert problems_of(with_owner) == []
    assert problems_of(replace(without, sql="COPY memories_memorychunk FROM STDIN"))


def test_an_excused_key_counts_on_either_side_of_its_condition():
    """The plans of a tier move seen in CI: the chunks found by memory id, written either way round."""
    assert names_key(
        "Index Scan on memories_memorychunk c: ((tier)::text <> 'warm'::text) (memory_id = 1)", "memory_id"
    )
    assert names_key(
        "Index Scan on memories_memorychunk c: (((c.tier)::text <> v.tier) AND (v.id = c.memory_id))", "memory_id"
    )
    assert not names_key("Seq Scan on memories_memorychunk c: ((c.tier)::text <> v.tier)", "memory_id")
    assert not names_key("Index Scan on memories_memorychunk c: (c.other_memory_id = 1)", "memory_id")
