"""bench_portability on tiny inputs: it runs end to end, and its model-alone reference embeds what the
import embeds, the way the import embeds it (benchmarks report figures; tests never assert a time)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from bench.management.commands import bench_portability
from memories import embedding

pytestmark = pytest.mark.django_db


def test_bench_portability_round_trips_a_small_mixed_account_and_times_the_same_embedding(monkeypatch):
    real, phase, embedded = embedding.embed_texts, ["build"], {}

    def recording(texts, **kwargs):
        embedded.setdefault(phase[0], []).extend(texts)
        return real(texts, **kwargs)

    monkeypatch.setattr(embedding, "embed_texts", recording)
    encode_like_import = bench_portability.Command._encode_like_import

    def reference(self, owner):
        phase[0] = "reference"
        return encode_like_import(self, owner)

    monkeypatch.setattr(bench_portability.Command, "_encode_like_import", reference)
    out = io.StringIO()
    call_command("bench_portability", memories=3, roundtrip=12, chat=0, stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert (result["roundtrip_differences"], result["roundtrip_failed"], result["reimport_created"]) == (0, 0, 0)
    assert result["export_memories"] == 3 and result["import_overhead_ratio"] is not None
    # The reference went through the configured backend, on the very texts the imports embedded
    # (each chunk under its memory's title), not the torch model on bare chunk texts.
    assert embedded["reference"] and set(embedded["reference"]) <= set(embedded["build"])


def test_bench_portability_imports_a_chatgpt_export_and_again_adds_nothing():
    out = io.StringIO()
    call_command("bench_portability", memories=0, roundtrip=0, chat=30, stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert (result["chat_import_created"], result["chat_import_failed"], result["chat_reimport_created"]) == (30, 0, 0)
    assert result["chat_branch_messages_left_out"] >= 1 and result["chat_messages_per_s"] > 0


def test_bench_portability_imports_a_small_mbox_twice_adding_nothing_the_second_time(tmp_path):
    out = io.StringIO()
    call_command("bench_portability", memories=0, roundtrip=0, mbox=25, stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    # 25 messages and the CSV attached to message 7 (one in twenty carries one).
    assert (result["mbox_total"], result["mbox_failed"]) == (25, 0)
    assert result["mbox_created"] == 26
    # The second time each message is known by its Message-ID, unread, and its attachment with it.
    assert (result["mbox_reimport_created"], result["mbox_reimport_duplicates"]) == (0, 25)
    assert result["mbox_peak_rss_growth_mb"] >= 0
