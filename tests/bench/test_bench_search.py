"""bench_search: percentiles over its own corpus, and the bulk path that drops and rebuilds the indexes."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_bench_search_builds_its_corpus_and_reports_percentiles():
    out = StringIO()
    call_command(
        "bench_search",
        "--chunks",
        "40",
        "--queries",
        "5",
        "--tiny-chunks",
        "8",
        "--ef-search",
        "10,40",
        stdout=out,
        stderr=StringIO(),
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["chunks"] == 40 and result["queries"] == 5
    assert 0 < result["p50_ms"] <= result["p95_ms"] <= result["p99_ms"]
    assert result["embed_query_ms"] > 0
    # A second, tiny owner searched in the same run.
    assert result["tiny_owner"]["chunks"] == 8 and result["tiny_owner"]["p95_ms"] > 0
    # Recall of the index against exact search, at each ef_search asked for (at least the candidates).
    recall = result["recall"]
    assert [row["ef_search"] for row in recall["ef_search"]] == [40, 40]
    assert all(0 <= row["recall_at_10"] <= 1 and row["p50_ms"] > 0 for row in recall["ef_search"])
    assert 0 <= recall["hybrid_top10_overlap"] <= 1
    # Disk and memory.
    assert result["sizes_mb"]["postings_rows"] > 0 and result["sizes_mb"]["database"] > 0
    assert result["memory"]["shared_buffers"]
    assert result["hnsw"] == {"m": 16, "ef_construction": 64, "ef_search": settings.KYBERNESIS_SEARCH_EF_SEARCH}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chunks", "0"], "at least 1"),
        (["--ef-search", "forty"], "comma-separated integers"),
        (["--ef-search", "0"], "between 1 and 1000"),
    ],
)
def test_bench_search_refuses_bad_arguments(args, message):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match=message):
        call_command("bench_search", "--queries", "5", *args, stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db(transaction=True)
def test_bench_search_bulk_path_recreates_the_production_indexes_and_searches():
    """The bulk path drops the HNSW and lexical indexes and the constraints, loads, and builds
    them again from their own definitions: afterwards they are exactly what the migrations made."""
    from django.contrib.auth import get_user_model

    from bench import bulk
    from memories.models import MemoryChunk
    from memories.search import hybrid_search

    indexes, constraints = bulk.index_definitions(), bulk.constraint_definitions()
    out = StringIO()
    call_command(
        "bench_search",
        "--chunks",
        "300",
        "--queries",
        "5",
        "--bulk",
        "--user",
        "bench-bulk",
        stdout=out,
        stderr=StringIO(),
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["chunks"] == 300 and result["build"]["mode"] == "bulk"
    assert set(result["build"]["index_mb"]) == set(indexes)
    assert {"load", "lexical", "constraints", "index memorychunk_hnsw_active"} <= set(result["build"]["phases_s"])
    assert bulk.constraint_definitions() == constraints
    _assert_same_indexes(bulk.index_definitions(), indexes)

    owner = get_user_model().objects.get(username="bench-bulk")
    chunk = MemoryChunk.objects.filter(owner=owner).first()
    found = hybrid_search(owner.pk, chunk.text.split(".")[0], limit=5, query_vector=chunk.embedding, min_score=0.0)
    assert chunk.pk in {r.chunk_id for r in found.results}
    # Searched by words alone too: the lexical index was built.
    words = hybrid_search(owner.pk, chunk.text.split(".")[0], limit=5, min_score=0.0, weights=(0.0, 1.0))
    assert words.results


@pytest.mark.django_db(transaction=True)
def test_bench_search_bulk_path_interrupted_leaves_the_indexes_in_place(monkeypatch):
    from bench import bulk
    from memories.models import MemoryChunk
    from memories.search import lexical

    indexes, constraints = bulk.index_definitions(), bulk.constraint_definitions()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(lexical, "reindex_owner", interrupted)
    with pytest.raises(KeyboardInterrupt):
        call_command("bench_search", "--chunks", "40", "--queries", "5", "--bulk", stdout=StringIO(), stderr=StringIO())
    assert bulk.index_definitions() == indexes and bulk.constraint_definitions() == constraints
    assert not MemoryChunk.objects.exists()


def _assert_same_indexes(after: dict[str, str], before: dict[str, str]) -> None:
    """Same definitions; a partial index's WHERE may be deparsed in another (equivalent) form once
    PostgreSQL has re-parsed it, so predicates are compared by their value for every tier."""
    from django.db import connection

    from memories.models import Tier

    assert after.keys() == before.keys()
    for name, definition in before.items():
        head, _, predicate = definition.partition(" WHERE ")
        head_after, _, predicate_after = after[name].partition(" WHERE ")
        assert head_after == head
        assert bool(predicate_after) == bool(predicate)
        if predicate:
            with connection.cursor() as cursor:
                for tier in Tier.values:
                    cursor.execute(f"SELECT {predicate}, {predicate_after} FROM (VALUES (%s::varchar)) v(tier)", [tier])
                    was, now = cursor.fetchone()
                    assert was == now, (name, tier)


def test_bench_search_with_a_trash_share_measures_the_same_queries_with_part_of_it_trashed():
    out = StringIO()
    call_command(
        "bench_search", "--chunks", "60", "--queries", "5", "--trash-share", "0.25", stdout=out, stderr=StringIO()
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    trash = result["trash"]
    assert trash["trashed_memories"] >= 1 and trash["trashed_in_results"] == 0
    assert trash["p50_ms"] > 0 and trash["after_restore_p50_ms"] > 0
    from memories.models import Memory

    assert not Memory.all_objects.filter(trashed_at__isnull=False).exists()  # restored afterwards
