"""bench_calibrate over hand-made score records: reliability per band, the rule's figures, the
chosen thresholds, and never-stored queries searched in another set's collection."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from bench.management.commands.bench_calibrate import balanced, calibrate, evaluate, reliability, rule
from tests.factories import make_memory


def row(data_set, kind, results, *, owner="calibrate-a", text="query"):
    return {
        "set": data_set,
        "owner": owner,
        "id": "q",
        "type": kind,
        "text": text,
        "background": 0.1,
        "results": results,
    }


ANSWERED = row("a", "keyword", [[0.7, 0.6, 0.9, 2, 1.0], [0.3, 0.2, 0.5, 0, 0.5]])
PARAPHRASE = row("a", "paraphrase", [[0.25, 0.36, 0.0, 2, 0.0], [0.2, 0.3, 0.0, 0, 0.0]])
NO_ANSWER = row("a", "no_answer", [[0.33, 0.28, 0.5, 0, 0.5]])


def test_the_rule_keeps_answers_by_meaning_and_leaves_near_misses_empty():
    figures = evaluate([ANSWERED, PARAPHRASE, NO_ANSWER], rule((0.34, 0.40, 0.28)))
    assert figures["relevant_top10_kept"] == 1.0 and figures["top1_answers_kept"] == 1.0
    assert figures["no_answer_empty"] == 1.0 and figures["never_stored_queries"] == 0
    assert balanced(figures) == 1.0


def test_reliability_counts_the_share_relevant_in_each_band():
    bands = {b["score"]: b for b in reliability([ANSWERED, PARAPHRASE, NO_ANSWER])}
    assert bands[0.7] == {"score": 0.7, "results": 1, "relevant_share": 1.0}
    assert bands[0.3]["relevant_share"] == 0.0, "no-answer queries are not judged results"
    assert {b["score"] for b in reliability([PARAPHRASE], column=1)} == {0.35, 0.3}


def test_calibration_picks_thresholds_from_the_grid():
    chosen = calibrate({"a": [ANSWERED, PARAPHRASE, NO_ANSWER]})
    assert 0.24 <= chosen["min_vector_score"] <= 0.36 and 0.32 <= chosen["min_score"] <= 1.01
    assert 0.2 <= chosen["min_keyword_score"] <= 0.36
    assert chosen["mean_balanced_accuracy"] == 1.0


@pytest.mark.django_db
def test_queries_of_one_set_are_searched_in_the_other_as_never_stored(tmp_path, capsys, django_user_model):
    a = django_user_model.objects.create(username="calibrate-a")
    b = django_user_model.objects.create(username="calibrate-b")
    make_memory(a, title="Dentist", content="Dr Patel on Tuesday at 15:30.")
    make_memory(b, title="Kitten", content="Pixel the kitten eats wet food twice a day.")
    scores = tmp_path / "scores.jsonl"
    rows = [
        row("a", "keyword", [[0.7, 0.6, 0.9, 2, 1.0]], owner="calibrate-a", text="dentist"),
        row("b", "keyword", [[0.7, 0.6, 0.9, 2, 1.0]], owner="calibrate-b", text="kitten food"),
    ]
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    call_command("bench_calibrate", "--scores", str(scores), "--never-stored", "1")
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(result["sets"]) == {"a", "b"}
    for figures in result["sets"].values():
        assert figures["rule"]["never_stored_queries"] == 1
        assert 0 <= figures["rule"]["never_stored_empty"] <= 1
    assert result["rule"].startswith("vectorScore ≥")
