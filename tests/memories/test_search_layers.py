"""The two vector index layers: the production search statement reads the active index for hot and
warm, both for every tier; archived memories stay searchable."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from memories import services
from memories.models import Memory
from tests.factories import make_memory
from tests.memories.helpers import age


def _vector_plan(user, tiers, *, exact: bool = False) -> str:
    """EXPLAIN the statement hybrid_search itself runs (memories.search.search_statement)."""
    from memories.search import SearchFilters, search_statement

    sql, params = search_statement(
        user.pk, "budget review", [0.1] * 384, limit=10, filters=SearchFilters(tiers=tuple(tiers)), exact=exact
    )
    with transaction.atomic(), connection.cursor() as cursor:
        # A tiny test table is cheaper to scan and sort than to walk an HNSW graph; price those plans out so
        # the plan shows which vector index a large collection would use.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_statement_returns_the_columns_a_candidate_names(user):
    from memories.search import SearchFilters, search_statement
    from memories.search.statement import Candidate

    sql, params = search_statement(user.pk, "budget review", [0.1] * 384, limit=10, filters=SearchFilters())
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        assert tuple(column.name for column in cursor.description) == Candidate._fields


def test_a_hot_and_warm_search_reads_only_the_active_index(user):
    plan = _vector_plan(user, ("hot", "warm"))
    assert "memorychunk_hnsw_active" in plan and "memorychunk_hnsw_archive" not in plan
    plan = _vector_plan(user, ("hot",))
    assert "memorychunk_hnsw_active" in plan and "memorychunk_hnsw_archive" not in plan


def test_a_search_of_every_tier_reads_both_layers(user):
    plan = _vector_plan(user, ())
    assert "memorychunk_hnsw_active" in plan and "memorychunk_hnsw_archive" in plan


def test_archived_memories_stay_searchable_and_the_tier_filter_excludes_them(user):
    from memories.search import SearchFilters, hybrid_search

    archived = age(make_memory(user, content="Zanzibar spice market trip itinerary."), days=90, priority=0.0)
    services.memories_retier(memory_ids=[archived.pk])
    assert Memory.objects.get(pk=archived.pk).tier == "archive"
    found = hybrid_search(user.pk, "Zanzibar spice market")
    assert [r.memory_id for r in found.results][:1] == [archived.pk] and found.results[0].tier == "archive"
    active_only = hybrid_search(user.pk, "Zanzibar spice market", filters=SearchFilters(tiers=("hot", "warm")))
    assert archived.pk not in {r.memory_id for r in active_only.results}


def test_a_small_collection_is_searched_exactly_without_the_shared_hnsw_index(user, settings):
    """An HNSW scan of a table shared with other owners (and dead entries) can miss a small owner's
    rows; up to KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS the owner's chunks are ranked exactly."""
    from memories.search import hybrid_search
    from memories.search.statement import exact_for

    plan = _vector_plan(user, (), exact=True)
    assert "hnsw" not in plan
    garage = make_memory(user, title="Garage", content="The vehicle repair at the garage cost 400 euros.")
    settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS = 1
    assert exact_for(user.pk)
    exact = hybrid_search(user.pk, "car maintenance bill", min_score=0).results
    settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS = 0
    assert not exact_for(user.pk)
    indexed = hybrid_search(user.pk, "car maintenance bill", min_score=0).results
    assert [r.memory_id for r in exact] == [r.memory_id for r in indexed] == [garage.pk]
    assert exact[0].vector_score == indexed[0].vector_score
    make_memory(user, content="A second note makes two chunks, over the bound of one.")
    settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS = 1
    assert not exact_for(user.pk)


def test_an_exact_search_ranks_its_first_results_the_same_whatever_the_limit(user, settings):
    """An exact search takes the longest list's candidate pool (MAX_LIMIT) on every side, so a search for
    10 results returns the first 10 of a search for 100; through the HNSW index the pool is the setting."""
    from memories.search import MAX_LIMIT, SearchFilters, hybrid_search, search_statement

    settings.KYBERNESIS_SEARCH_VECTOR_CANDIDATES = 3  # a small pool, so that it would matter
    settings.KYBERNESIS_SEARCH_LEXICAL_CANDIDATES = settings.KYBERNESIS_SEARCH_TERM_CANDIDATES = 3
    for exact, pool in ((True, MAX_LIMIT), (False, 10)):
        _, params = search_statement(user.pk, "budget", [0.1] * 384, limit=10, filters=SearchFilters(), exact=exact)
        assert params["k_vec"] == params["k_lex"] == params["k_term"] == pool
    for i in range(12):
        make_memory(user, title=f"Trip {i}", content=f"Day {i} of the walking trip: hills, rain and a long lunch.")
    few = hybrid_search(user.pk, "walking holiday in the rain", limit=4, min_score=0).results
    many = hybrid_search(user.pk, "walking holiday in the rain", limit=12, min_score=0).results
    assert len(many) == 12 and [r.chunk_id for r in few] == [r.chunk_id for r in many[:4]]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [(0, 64), (10_000, 64), (128_000, 64), (200_000, 100), (1_000_000, 500), (5_000_000, 1000)],
)
def test_ef_search_grows_with_the_owner_past_the_floor(settings, chunks, expected):
    """The index's recall falls as an owner grows (0.96 at 100,000 chunks, 0.76 at a million at 64), so
    ef_search is one per 2,000 chunks past the floor of 64, at most pgvector's 1000."""
    from memories.search.statement import ef_search_for

    assert ef_search_for(chunks) == expected
    settings.KYBERNESIS_SEARCH_CHUNKS_PER_EF = 0
    assert ef_search_for(chunks) == 64  # 0: the floor alone, for every size


def test_the_search_sets_the_ef_search_of_the_owners_size(user, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memories.search import hybrid_search

    for n in range(12):
        make_memory(user, title=f"Note {n}", content=f"Short note number {n} about the allotment.")
    settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS = 0
    settings.KYBERNESIS_SEARCH_VECTOR_CANDIDATES = 1
    settings.KYBERNESIS_SEARCH_EF_SEARCH = 1
    settings.KYBERNESIS_SEARCH_CHUNKS_PER_EF = 1  # one per chunk: 12 chunks, ef_search 12 (over the limit, 10)
    with CaptureQueriesContext(connection) as queries:
        hybrid_search(user.pk, "allotment note", min_score=0)
    sets = [q["sql"] for q in queries.captured_queries if "hnsw.ef_search" in q["sql"]]
    assert sets and all("hnsw.ef_search = 12;" in sql for sql in sets)


@pytest.mark.django_db(transaction=True)
def test_an_exact_search_reads_the_owners_vectors_from_their_index_alone(user):
    """A chunk row is over the TOAST threshold, so the table holds each vector out of line: an exact
    search reads them from memorychunk_owner_vectors by an index-only scan, under the settings the
    search itself sends (statement._EXACT_SETTINGS), once the table's pages are all visible (as
    autovacuum leaves them after inserts)."""
    from memories.search import SearchFilters, search_statement
    from memories.search.statement import _EXACT_SETTINGS

    paragraph = "The allotment society reviews its budget: seeds, water, tools and the shed roof. " * 12
    for n in range(24):  # rows of realistic width (about 1 kB of text each), as the planner sees them
        make_memory(user, title=f"Budget {n}", content=f"Budget review number {n}. {paragraph}")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memories_memorychunk")
    sql, params = search_statement(user.pk, "budget review", [0.1] * 384, limit=10, filters=SearchFilters(), exact=True)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_EXACT_SETTINGS)
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Only Scan using memorychunk_owner_vectors" in plan, plan
    assert "hnsw" not in plan


def _plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", ()):
        yield from _plan_nodes(child)


@pytest.mark.django_db(transaction=True)
def test_the_statement_reads_only_the_candidates_rows_whatever_the_planner_believes(user, django_user_model):
    """The planner's row counts for an owner whose memories are new are stale (these tables were never
    analysed). The statement still looks each query term's statistics up on its own and reads each
    candidate's row by its key: no step reads all of the owner's term statistics or chunks, which made
    a search of a new account two and a half times as costly before."""
    from memories.search import SearchFilters, search_statement
    from memories.search.statement import _EXACT_SETTINGS

    other = django_user_model.objects.create_user(username="neighbour", email="neighbour@example.com")
    for n in range(6):
        make_memory(other, title=f"Neighbour {n}", content=f"Garden shed inventory {n}: rakes, hoes and twine.")
    words = "apple birch cedar dahlia elder fennel ginger hazel iris juniper kale lupin mint nettle".split()
    for n, word in enumerate(words):
        make_memory(user, title=f"{word.title()} notes", content=f"Budget review of the {word} bed, note {n}.")
    sql, params = search_statement(user.pk, "budget review", [0.1] * 384, limit=10, filters=SearchFilters(), exact=True)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_EXACT_SETTINGS)
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]["Plan"]
        cursor.execute(sql, params)
        candidates = len(cursor.fetchall())
    nodes = list(_plan_nodes(plan))
    term_stats = [n for n in nodes if n.get("Relation Name") == "memories_termstat"]
    assert term_stats and all(n["Actual Rows"] <= 1 for n in term_stats), term_stats
    # Outside the vector layers' index-only scans, the chunk table gives up the candidates' rows only.
    chunk_rows = sum(
        n["Actual Rows"] * n["Actual Loops"]
        for n in nodes
        if n.get("Relation Name") == "memories_memorychunk" and n["Node Type"] != "Index Only Scan"
    )
    assert candidates and chunk_rows == candidates, (chunk_rows, candidates)
