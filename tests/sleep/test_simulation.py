"""simulate_usage: days of use in compressed time (time-machine), the tier distribution per week."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command

from memories.models import Memory, TierMove
from sleep.simulation import Simulation, chart_svg, run

pytestmark = pytest.mark.django_db(transaction=True)

START = datetime(2026, 1, 5, tzinfo=UTC)


def test_unused_memories_cool_down_and_manual_tags_keep_them_out_of_the_archive(user):
    sim = Simulation(days=40, initial=8, new_per_day=0, opens_per_day=0, manual_tagged=2, seed=3)
    weeks = run(owner=user, sim=sim, start=START)
    assert [w["day"] for w in weeks] == [7, 14, 21, 28, 35, 40]
    assert weeks[-1]["hot"] == 0  # nobody opened them: they left hot
    moves = set(TierMove.objects.filter(memory__owner=user).values_list("from_tier", "to_tier"))
    assert ("hot", "warm") in moves and ("warm", "archive") in moves
    assert weeks[-1]["warm"] + weeks[-1]["archive"] == 8
    assert weeks[-1]["archive"] >= 1
    assert all(w["manualTaggedArchived"] == 0 for w in weeks)
    # Time travelled: the memories were made on the simulated first day, not today.
    assert set(Memory.objects.filter(owner=user).values_list("created_at__date", flat=True)) == {START.date()}


def test_opened_memories_stay_hot_and_new_ones_arrive(user):
    sim = Simulation(days=10, initial=6, new_per_day=1, opens_per_day=3, manual_tagged=1, seed=5)
    weeks = run(owner=user, sim=sim, start=START)
    assert weeks[-1]["memories"] == 16 and weeks[-1]["opens"] == 30
    opened = Memory.objects.filter(owner=user, access_count__gt=0)
    assert opened.exists() and weeks[-1]["hot"] >= 1
    assert all(START < m.last_accessed_at <= datetime(2026, 1, 16, tzinfo=UTC) for m in opened)


def test_the_command_prints_weekly_json_and_draws_a_chart(tmp_path):
    out = StringIO()
    chart = tmp_path / "tiers.svg"
    call_command(
        "simulate_usage",
        "--days",
        "7",
        "--initial",
        "4",
        "--new-per-day",
        "0",
        "--opens-per-day",
        "1",
        "--chart",
        str(chart),
        stdout=out,
        stderr=StringIO(),
    )
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["days"] == 7 and len(result["weeks"]) == 1
    assert set(result["weeks"][0]) >= {"week", "hot", "warm", "archive", "memories"}
    assert chart.read_text().startswith("<svg") and "week 1" in chart.read_text()


def test_the_chart_has_a_bar_per_week_and_tier():
    weeks = [{"week": i, "day": 7 * i, "memories": 10, "hot": 10 - i, "warm": i, "archive": 0} for i in range(1, 4)]
    svg = chart_svg(weeks)
    assert svg.count("<rect") == 1 + 3 * 3 + 3  # background, bars, legend
