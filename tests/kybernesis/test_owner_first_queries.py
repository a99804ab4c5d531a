"""Every production query that touches the chunk tables names the owner: the shape a split of those
tables by owner (hash partitions, a Citus distribution column) needs to reach one shard or partition
(README, "Past one database"). The queries are captured while the API is used end to end."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CHUNK_TABLES = ("memories_memorychunk",)
# owner_id compared with a value or a list, a join on the owner column, or an INSERT that names it.
OWNER_PREDICATE = re.compile(r'owner_id"?\s*(=|IN\b|= ANY)', re.IGNORECASE)
# The exceptions, named in the README: Django's delete collector. Deleting a memory, ON DELETE CASCADE
# looks its chunks up by memory_id; deleting chunks (also after an owner-scoped lookup), it deletes
# them by primary key. Still correct on a split table, each visits every partition's index.
CASCADE_COLLECTOR = (
    'SELECT "memories_memorychunk"."id" FROM "memories_memorychunk" WHERE "memories_memorychunk"."memory_id" IN',
    'DELETE FROM "memories_memorychunk" WHERE "memories_memorychunk"."id" IN',
)


def touches_chunks(sql: str) -> bool:
    return any(table in sql for table in CHUNK_TABLES)


def names_owner(sql: str) -> bool:
    if sql.lstrip().upper().startswith("INSERT"):
        return "owner_id" in sql.split("VALUES")[0] or "owner_id" in sql.split("SELECT")[0]
    return bool(OWNER_PREDICATE.search(sql))


def use_everything(api) -> None:
    """The API calls that read or write chunks: create, batch, search, detail, change, pin, export,
    a sleep cycle, chat, delete."""
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
    for call in (
        lambda: api.get("/api/v1/search", {"q": "first compiler"}),
        lambda: api.post("/api/v1/search", {"query": "Analytical Engine London"}),
        lambda: api.get(f"/api/v1/memories/{ids[0]}"),
        lambda: api.patch(f"/api/v1/memories/{ids[1]}", {"content": "Grace Hopper found a moth in the Mark II."}),
        lambda: api.post(f"/api/v1/memories/{ids[2]}/pin"),
        lambda: api.get("/api/v1/export"),
        lambda: api.post("/api/v1/sleep/runs", {}),
        lambda: api.post("/api/v1/chat/messages", {"content": "Who wrote the first program?"}),
        lambda: api.delete(f"/api/v1/memories/{ids[0]}"),
    ):
        response = call()
        assert response.status_code < 400, response.content


def test_every_query_on_the_chunk_tables_filters_by_owner(api):
    with CaptureQueriesContext(connection) as captured:
        use_everything(api)

    chunk_queries = [q["sql"] for q in captured.captured_queries if touches_chunks(q["sql"])]
    assert len(chunk_queries) > 20  # the tour really reached the chunks
    without_owner = [sql for sql in chunk_queries if not names_owner(sql)]
    assert [sql for sql in without_owner if not sql.startswith(CASCADE_COLLECTOR)] == []
