"""bench_answers: the answer benchmark ends with JSON."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_the_benchmark_command_prints_json_last(user):
    import json
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("bench_answers", stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["questions"] == 25 and result["chat_questions_cited"] == 0
    assert 0 <= result["first_sentence_contains_answer"] <= result["any_cited_sentence_contains_answer"] <= 1
