"""bench_load starts the real server (gunicorn and the worker) on a fresh data directory and ends with JSON."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from bench.load import percentile

SCIFACT_MINI = Path(__file__).resolve().parent.parent / "data" / "scifact-mini"


def test_bench_load_runs_end_to_end_through_http_and_ends_with_json(monkeypatch):
    monkeypatch.setenv("KYBERNESIS_WEB_WORKERS", "1")
    monkeypatch.setenv("KYBERNESIS_WEB_THREADS", "2")
    out = StringIO()
    call_command(
        "bench_load", seconds=1, clients=2, memories=6, users=2, data=str(SCIFACT_MINI), stdout=out, stderr=StringIO()
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    for phase in ("search", "search_new_connection", "mixed"):
        assert set(result[phase]) >= {"rps", "p50_ms", "p95_ms", "p99_ms"}
        assert result[phase]["requests"] > 0
    assert result["errors"] == 0
    assert result["lost_writes"] == 0
    assert result["web_workers"] == 1 and result["web_worker_rss_mb"][0] > 0


def test_percentiles_pick_the_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 51.0
    assert percentile(values, 95) == 95.0
    assert percentile([], 95) == 0.0
