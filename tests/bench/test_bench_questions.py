"""bench_questions: the question rule's precision and recall on labelled messages, JSON last."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command


def test_precision_and_recall_per_language_and_overall(tmp_path):
    rows = [
        {"text": "Wo habe ich geparkt?", "asks": True, "lang": "de"},
        {"text": "Ich habe unter dem Topf geparkt.", "asks": False, "lang": "de"},
        {"text": "Finde eine Arbeit namens Fire", "asks": True, "lang": "de"},  # a miss
        {"text": "Remind me to call Sam.", "asks": False, "lang": "en"},
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = StringIO()
    call_command("bench_questions", labels=str(path), show=True, stdout=out)
    lines = out.getvalue().strip().splitlines()
    result = json.loads(lines[-1])
    assert result["overall"] == {
        "messages": 4,
        "asking": 2,
        "precision": 1.0,
        "recall": 0.5,
        "accuracy": 0.75,
        "falsePositives": 0,
        "falseNegatives": 1,
    }
    assert result["byLanguage"]["en"]["precision"] is None and result["byLanguage"]["de"]["recall"] == 0.5
    assert any("missed question" in line and "Fire" in line for line in lines)


def test_a_missing_file_or_a_bad_line_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no labels file"):
        call_command("bench_questions", labels=str(tmp_path / "none.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "hi"}\n', encoding="utf-8")
    with pytest.raises(CommandError, match="line 1"):
        call_command("bench_questions", labels=str(bad))
