"""bench_embed compares the torch and ONNX backends on a few texts and ends with JSON."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

from django.core.management import call_command


def test_bench_embed_compares_backends_and_ends_with_json():
    out = StringIO()
    call_command(
        "bench_embed",
        texts=6,
        queries=3,
        no_fp32=True,
        data=str(Path(__file__).resolve().parent.parent / "data" / "scifact-mini"),
        stdout=out,
        stderr=StringIO(),
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert list(result)[:5] == [
        "torch_chunks_per_s",
        "onnx_int8_chunks_per_s",
        "speedup",
        "cosine_agreement",
        "query_p50_ms",
    ]
    assert result["texts"] == 6
    assert 0.98 < result["cosine_agreement"] <= 1.0001
