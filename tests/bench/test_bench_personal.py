"""bench_personal on its labelled collection: every figure is a share, over the whole query set."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_bench_personal_reports_its_figures(capsys):
    call_command("bench_personal")
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("top1", "mrr@10", "ndcg@5", "no_answer_empty", "question_above_answer", "paraphrase_top1"):
        assert 0 <= result[key] <= 1
    assert result["queries"] >= 40 and result["no_answer_queries"] >= 10
