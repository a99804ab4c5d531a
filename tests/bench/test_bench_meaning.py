"""bench_meaning: the statement rewrite rule, and a run over the personal collections alone."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from bench.management.commands.bench_meaning import OPTIONS, as_statement


@pytest.mark.parametrize(
    ("query", "statement"),
    [
        ("when does my classical music group practise", "my classical music group practise"),
        ("What did Caroline adopt?", "Caroline adopt"),
        ("how much does the dog walker charge", "the dog walker charge"),
        ("gift for my brother", ""),  # not a question: nothing to rewrite
    ],
)
def test_a_question_is_rewritten_as_a_statement(query, statement):
    assert as_statement(query) == statement


@pytest.mark.django_db
def test_every_option_is_measured_on_each_personal_collection(capsys):
    call_command("bench_meaning")
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(report) == set(OPTIONS)
    for figures in report.values():
        assert set(figures) == {"personal_paraphrase_top1", "personal-2_paraphrase_top1"}
        assert all(0 <= value <= 1 for value in figures.values())
