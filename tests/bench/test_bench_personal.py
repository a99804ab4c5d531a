"""bench_personal on its labelled collection: every figure is a share, over the whole query set."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_bench_personal_reports_each_collection_apart(capsys):
    call_command("bench_personal")
    sets = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["sets"]
    assert set(sets) == {"personal", "personal-2"}
    for result in sets.values():
        for key in ("top1", "mrr@10", "ndcg@5", "no_answer_empty", "question_above_answer", "paraphrase_top1"):
            assert 0 <= result[key] <= 1
        assert result["queries"] >= 40 and result["no_answer_queries"] >= 10
    assert sets["personal-2"]["by_type"]["paraphrase"] is not None


def test_the_second_collection_has_enough_paraphrases_and_near_misses():
    from bench.datasets import read_jsonl
    from bench.management.commands.bench_personal import DATA

    queries = read_jsonl(DATA / "personal-2" / "queries.jsonl")
    assert sum(q["type"] == "paraphrase" for q in queries) >= 15
    assert sum(q["type"] == "no_answer" for q in queries) >= 15
