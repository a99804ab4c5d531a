"""bench_history end to end on a few documents: both sides timed, ratios given, nothing left behind."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memories.models import Memory, MemoryVersion

pytestmark = pytest.mark.django_db


def test_bench_history_times_both_sides_and_ends_with_json():
    out = StringIO()
    call_command("bench_history", "--docs", "2", "--rounds", "2", "--doc-chars", "800", stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    for part in ("ingest", "content_edit", "light_edit"):
        assert result[part]["history_on_s"] > 0 and result[part]["history_off_s"] > 0
        assert result[part]["ratio"] > 0
    assert result["ingest"]["chunks_per_s_on"] > 0 and result["ingest"]["chunks_per_s_off"] > 0
    assert not Memory.objects.exists() and not MemoryVersion.objects.exists()
