"""bench_graph on a tiny corpus: it extracts entities and relationships and ends with JSON."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_bench_graph_runs_on_a_tiny_corpus_and_ends_with_json(db, tmp_path):
    import json
    from io import StringIO
    from pathlib import Path

    from django.core.management import call_command

    data = Path(__file__).resolve().parents[1] / "data" / "scifact-mini"
    out = StringIO()
    call_command("bench_graph", "--chunks", "5", "--data", str(data), stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["chunks"] >= 5 and result["entities"] > 0 and result["relationships"] > 0
    assert set(result) >= {"chunks", "chunks_per_s", "entities", "relationships"}
