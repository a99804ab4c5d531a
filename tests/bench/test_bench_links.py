"""bench_links on a tiny SciFact: it links the abstracts, scores them against co-citations, ends with JSON."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from bench.management.commands.bench_links import co_cited

pytestmark = pytest.mark.django_db

MINI = Path(__file__).resolve().parents[1] / "data" / "scifact-mini"


def test_co_cited_pairs_are_the_abstracts_one_claim_cites_together():
    cited, pairs = co_cited({"1": {"a": 1, "b": 1, "c": 1}, "2": {"d": 1}, "3": {"b": 1, "e": 1}})
    assert cited == ["a", "b", "c", "e"]
    assert pairs == {("a", "b"), ("a", "c"), ("b", "c"), ("b", "e")}


def test_bench_links_runs_on_a_tiny_scifact_and_ends_with_json():
    out = StringIO()
    call_command("bench_links", "--data", str(MINI), "--distractors", "6", stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["memories"] == 8 and result["co_cited_pairs"] == 1
    assert result["links_at_one"] == 0 and result["common_only_links"] == 0
    assert result["link_pair_recall"] in (0.0, 1.0)
    assert {"link_precision", "links_per_memory", "by_shared_things", "examples"} <= result.keys()


def test_bench_links_refuses_a_folder_without_scifact(tmp_path):
    with pytest.raises(CommandError, match=r"corpus\.jsonl"):
        call_command("bench_links", "--data", str(tmp_path), stdout=StringIO())
