"""bench_conversations on a tiny conversation in the LoCoMo layout: turns become chat memories and the
recall figures are shares."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.management.commands.bench_conversations import evidence, turns
from memories.models import Memory, Source

pytestmark = pytest.mark.django_db

SAMPLE = {
    "sample_id": "t1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:00 pm on 1 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten called Pixel yesterday!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "How lovely. What does Pixel eat?"},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "Wet food twice a day.", "blip_caption": "a photo of a cat"},
        ],
        "session_2_date_time": "2:00 pm on 9 May, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "I finally ran the Lisbon half marathon in 1:52."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Amazing, you trained for months."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ana's kitten?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
        {"question": "What was Ben's half marathon time?", "answer": "1:52", "evidence": ["D2:1; D1:1"], "category": 1},
        {"question": "What did Ben adopt?", "adversarial_answer": "a kitten", "evidence": ["D1:1"], "category": 5},
    ],
}


def test_each_turn_is_one_chat_memory_and_recall_is_a_share(tmp_path, capsys):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    call_command("bench_conversations", "--data", str(path), "--scores", str(tmp_path / "scores.jsonl"))
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["turns"] == 5 and result["questions"] == 2, "category 5 has no answer in the conversation"
    for key in ("turn_r@5", "turn_r@10", "session_r@5", "turn_r@5_floored", "session_r@5_floored"):
        assert 0 <= result[key] <= 1
    memories = Memory.objects.filter(owner__username="bench-conversations-t1")
    assert memories.count() == 5 and set(memories.values_list("source", flat=True)) == {Source.CHAT}
    assert memories.get(metadata__diaId="D1:3").content == "Ana: Wet food twice a day. [shares a photo of a cat]"
    assert len((tmp_path / "scores.jsonl").read_text().splitlines()) == 2
    # A second run finds the conversation stored and stores nothing again.
    call_command("bench_conversations", "--data", str(path))
    assert Memory.objects.filter(owner__username="bench-conversations-t1").count() == 5


def test_evidence_lists_and_turn_order_are_read_as_the_data_set_writes_them():
    assert evidence({"evidence": ["D8:6; D9:17", "D1:3"]}) == {"D8:6", "D9:17", "D1:3"}
    assert evidence({"evidence": []}) == set()
    assert [t["dia_id"] for t in turns(SAMPLE["conversation"])] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]


def test_a_missing_data_set_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("bench_conversations", "--data", str(tmp_path / "nope.json"))
    with pytest.raises(CommandError, match=r"no \.json files"):
        call_command("bench_conversations", "--data", str(tmp_path))
