"""bench_retrieval on a small slice of SciFact, and on what is already loaded (--loaded-only)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_bench_retrieval_runs_end_to_end_on_a_small_slice(tmp_path):
    data = Path(__file__).resolve().parents[1] / "data" / "scifact-mini"
    out = StringIO()
    call_command(
        "bench_retrieval",
        "--data",
        str(data),
        "--docs",
        "20",
        "--queries",
        "5",
        "--user",
        "bench-mini",
        stdout=out,
        stderr=StringIO(),
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["docs"] == 20 and 0 < result["queries"] <= 5
    for key in ("ndcg@10", "recall@100", "vector_only_ndcg@10", "metadata_only_ndcg@10"):
        assert 0.0 <= result[key] <= 1.0
    # --loaded-only judges what is loaded and ingests nothing more (a partly loaded corpus).
    out = StringIO()
    call_command(
        "bench_retrieval", "--data", str(data), "--loaded-only", "--user", "bench-mini", stdout=out, stderr=StringIO()
    )
    partial = json.loads(out.getvalue().strip().splitlines()[-1])
    assert partial["docs"] == 20 and partial["ingest_s"] == 0.0 and 0 < partial["queries"] <= result["queries"]
