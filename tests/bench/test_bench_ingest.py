"""bench_ingest end to end, with one worker thread and with two; it deletes what it stored."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memories.models import Memory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "concurrency",
    [
        pytest.param("1"),
        # worker threads have their own connections: they must see committed rows
        pytest.param("2", marks=pytest.mark.django_db(transaction=True)),
    ],
)
def test_bench_ingest_runs_end_to_end_and_ends_with_json(concurrency):
    out = StringIO()
    call_command("bench_ingest", "--docs", "3", "--doc-chars", "1500", "--concurrency", concurrency, stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["docs"] == 3 and result["chunks"] >= 3
    assert result["concurrency"] == int(concurrency)
    assert {
        "backend",
        "docs",
        "concurrency",
        "history",
        "chunks",
        "seconds",
        "chunks_per_s",
        "encode_only_chunks_per_s",
        "overhead_ratio",
        "encode_batched_chunks_per_s",
        "batched_overhead_ratio",
    } == set(result)
    assert result["overhead_ratio"] > 0 and result["batched_overhead_ratio"] > 0
    assert not Memory.objects.exists()


def test_bench_ingest_with_history_off_keeps_no_versions_or_activity():
    from memories.models import Activity, MemoryVersion

    out = StringIO()
    call_command(
        "bench_ingest",
        "--docs",
        "2",
        "--doc-chars",
        "800",
        "--concurrency",
        "1",
        "--history",
        "off",
        "--keep",
        stdout=out,
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["history"] == "off" and Memory.objects.count() == 2
    assert not MemoryVersion.objects.exists() and not Activity.objects.exists()
