"""Simulate days of use in compressed time and print the tier distribution per week; last line is JSON.

See bench/simulation.py for the collection and the usage log. A fresh user is created for the run
and deleted afterwards (--keep keeps it); --chart writes the weekly distribution as an SVG. The clock
is moved with time-machine, from the dev extra (make install-test).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from bench.simulation import Simulation, chart_svg, run


class Command(BaseCommand):
    help = "Simulate days of use (new notes, opens, the sleep cycle) and print the weekly tier distribution."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=90)
        parser.add_argument("--initial", type=int, default=60, help="memories at the start")
        parser.add_argument("--new-per-day", type=float, default=2.0)
        parser.add_argument("--opens-per-day", type=int, default=6)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--chart", default="", help="write an SVG chart of the weeks to this path")
        parser.add_argument("--keep", action="store_true", help="keep the simulated user")

    def handle(self, *args, days, initial, new_per_day, opens_per_day, seed, chart, keep, **options):
        if (
            not 1 <= days <= 3650
            or not 1 <= initial <= 10_000
            or not 0 <= new_per_day <= 100
            or not 0 <= opens_per_day <= 1000
        ):
            raise CommandError("--days 1..3650, --initial 1..10000, --new-per-day 0..100, --opens-per-day 0..1000")
        try:
            import time_machine  # noqa: F401 - the simulation moves the clock with it
        except ImportError:
            # A development tool, not a runtime dependency: production installs leave it out.
            raise CommandError("simulate_usage needs time-machine, from the dev extra: run make install-test") from None
        owner = get_user_model().objects.create(username=f"simulate-{uuid.uuid4().hex[:8]}", email="simulate@localhost")
        sim = Simulation(days=days, initial=initial, new_per_day=new_per_day, opens_per_day=opens_per_day, seed=seed)
        start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days + 1)
        try:
            weeks = run(
                owner=owner,
                sim=sim,
                start=start,
                progress=lambda week: self.stderr.write(
                    f"week {week['week']}: {week['hot']} hot, {week['warm']} warm, "
                    f"{week['archive']} archive, {week['links']} links; moves {week['moves']}; opened {week['opened']}; "
                    f"rules {week['rules']}"
                ),
            )
        finally:
            if not keep:
                owner.delete()
        if chart:
            path = Path(chart)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(chart_svg(weeks, title=f"Tiers over a simulated {days} days"), encoding="utf-8")
        self.stdout.write(json.dumps({"days": days, "weeks": weeks}))
