"""simulate_usage: days of use in compressed time (time-machine), the tier distribution per week."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from bench.simulation import Simulation, chart_svg, run
from memories.models import Memory, TierMove

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


def test_ninety_days_of_use_give_a_plausible_picture(user):
    import time_machine

    from memories.services import memory_open
    from sleep.models import SleepRun
    from sleep.pipeline import sleep_run_execute, sleep_run_request

    sim = Simulation(days=90, initial=24, new_per_day=0.5, opens_per_day=3, manual_tagged=3, seed=11)
    weeks = run(owner=user, sim=sim, start=START)
    last = weeks[-1]
    assert last["day"] == 90 and last["memories"] > 24 + 30
    # Most memories are rarely opened, and most are not hot: some warm, some archived.
    assert last["opened"]["never"] + last["opened"]["once"] > last["memories"] / 2
    assert last["hot"] < last["memories"] / 2
    assert last["warm"] >= 5 and last["archive"] >= 5
    assert all(w["manualTaggedArchived"] == 0 for w in weeks) and last["manualTagged"] == 3
    moves = set(TierMove.objects.filter(memory__owner=user).values_list("from_tier", "to_tier"))
    assert {("hot", "warm"), ("warm", "archive"), ("warm", "hot")} <= moves
    # The rules that hold memories hot are use and fresh links, not a link count alone.
    assert sum(n for rule, n in last["rules"].items() if rule == "hot:relationships") < last["memories"] / 4
    # An archived memory that is opened comes back up at the next cycle.
    archived = Memory.objects.filter(owner=user, tier="archive").order_by("pk").first()
    with time_machine.travel(START + timedelta(days=91, hours=9), tick=False):
        memory_open(memory=archived)
        cycle, _ = sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=user)
        sleep_run_execute(run_id=cycle.pk)
    archived.refresh_from_db()
    assert archived.tier == "hot"
    assert archived.tier_moves.first().from_tier == "archive"


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


def test_without_time_machine_the_command_says_to_install_the_dev_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "time_machine", None)  # an import of it raises ImportError

    with pytest.raises(CommandError, match="dev extra: run make install-test"):
        call_command("simulate_usage", "--days", "1", stdout=StringIO(), stderr=StringIO())
    assert not get_user_model().objects.filter(username__startswith="simulate-").exists()


def test_the_chart_has_a_bar_per_week_and_tier():
    weeks = [{"week": i, "day": 7 * i, "memories": 10, "hot": 10 - i, "warm": i, "archive": 0} for i in range(1, 4)]
    svg = chart_svg(weeks)
    assert svg.count("<rect") == 1 + 3 * 3 + 3  # background, bars, legend
