"""A simulated stretch of use, in compressed time: a generated collection, a realistic usage log and
the sleep cycle, day by day, with the tier distribution recorded each week.

The collection: memories about a dozen topics, each note naming some of its topic's people, places
and technologies, so notes of one topic share entities and link. New notes keep arriving (about
two a day), most on a topic already there, so new memories link to old ones. A few notes get
manual tags. The usage log: each day a person opens a handful of memories, chosen with a Zipf
law over a personal ranking, so a few are opened often and most rarely or never; now and then an
old note comes back into use. Time is moved with time-machine, so every timestamp (creation,
access, link, tier move) is the simulated one.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from unittest import mock

from graph import signals as graph_signals
from graph import tasks as graph_tasks
from graph.models import MemoryLink
from memories.models import Memory, TierMove
from memories.services import MemoryInput, memory_create_many, memory_open, memory_tags_add
from memories.signals import content_changed
from sleep.models import SleepRun
from sleep.pipeline import sleep_run_execute, sleep_run_request

TOPICS = {
    "phoenix": (
        ["PostgreSQL", "pgvector", "Priya Raman", "HNSW", "Project Phoenix", "autovacuum"],
        ["index build", "query latency", "bulk load", "vacuum settings", "backup drill"],
    ),
    "kubernetes": (
        ["Kubernetes", "Helm", "Marcus Webb", "Redis", "Argo CD", "kubectl"],
        ["pod restarts", "node pressure", "chart upgrade", "probe timeouts", "on-call rota"],
    ),
    "coffee": (
        ["espresso", "grinder", "pre-infusion", "roast date", "flat burrs"],
        ["sour shots", "grind size", "dose and yield", "bean freshness", "puck prep"],
    ),
    "japan": (
        ["Tokyo", "Kyoto", "Shinkansen", "Nara", "ryokan", "Japan Rail Pass"],
        ["train tickets", "temple visits", "packing list", "hotel booking", "food tour"],
    ),
    "running": (
        ["Berlin Marathon", "tempo run", "long run", "carbon shoes", "energy gels"],
        ["weekly mileage", "race pace", "taper plan", "knee niggle", "fuelling plan"],
    ),
    "frontend": (
        ["React", "TypeScript", "Vite", "Lena Fischer", "Playwright", "Vitest"],
        ["bundle size", "state management", "component tests", "build speed", "accessibility"],
    ),
    "rag": (
        ["LLM", "retrieval", "cross-encoder", "sentence-transformers", "prompt template"],
        ["chunk size", "answer quality", "hallucinations", "re-ranking", "evaluation set"],
    ),
    "finance": (
        ["index fund", "ETF", "savings plan", "tax return", "emergency fund"],
        ["monthly budget", "rebalancing", "capital gains", "rent increase", "insurance"],
    ),
    "team": (
        ["Alice Chen", "Tom Becker", "Lisbon", "offsite", "hiring loop"],
        ["interview panel", "promotion case", "roadmap review", "retro notes", "venue contract"],
    ),
    "garden": (
        ["tomatoes", "balcony", "seedlings", "compost", "basil"],
        ["watering", "frost dates", "pests", "repotting", "harvest"],
    ),
    "reading": (
        ["Daniel Kahneman", "planning fallacy", "book club", "anchoring", "heuristics"],
        ["chapter notes", "quotes", "discussion questions", "summary", "reading list"],
    ),
    "health": (
        ["Dr. Patel", "Dr. Okafor", "physiotherapy", "dentist", "check-up"],
        ["appointment", "exercises", "claims", "results", "follow-up"],
    ),
}
SENTENCES = [
    "Notes on {a} and the {c}.",
    "{a} came up again while working on the {c}.",
    "Compared two ways of handling the {c} with {a}.",
    "Follow-up on the {c}: {a} is settled for now.",
    "Learned something about {a} today, and how it affects the {c}.",
]
# Everyday filler, so notes of one topic differ as real notes do.
FILLER = [
    "The first attempt did not work.",
    "It took longer than planned.",
    "Worth writing down before I forget.",
    "Nothing urgent, but keep an eye on it.",
    "Two options left; decide by the end of the month.",
    "A quick check showed the numbers were off.",
    "Good result overall.",
    "Needs a second opinion.",
    "Parked until the next review.",
    "Small change, big difference.",
    "Budget is fine for this.",
    "The old approach is still documented in the wiki.",
    "Remember to share this with the others.",
]


@dataclass
class Simulation:
    days: int = 90
    initial: int = 60
    new_per_day: float = 2.0
    opens_per_day: int = 6
    manual_tagged: int = 6
    seed: int = 7
    weeks: list[dict] = field(default_factory=list)


def note(rng: random.Random, topic: str) -> tuple[str, str]:
    # One name and one subject of the topic, and everyday filler: notes of one topic share a name or
    # a subject now and then, as real ones do, rather than all of their vocabulary.
    names, subjects = TOPICS[topic]
    a, c = rng.choice(names), rng.choice(subjects)
    body = " ".join([rng.choice(SENTENCES).format(a=a, c=c), *rng.sample(FILLER, 2)])
    return f"{topic.capitalize()}: {c}", body


def run(*, owner, sim: Simulation, start: datetime, progress=None) -> list[dict]:
    """Simulate sim.days days of use for owner (who should have no memories yet); returns one
    {"week", "day", "memories", "hot", "warm", "archive", "manualTagged", "manualTaggedArchived",
    "opens", "links"} per week."""
    import time_machine  # a dev dependency: only the simulation needs it

    rng = random.Random(sim.seed)
    topics = list(TOPICS)
    # Each person has favourite topics: most new notes and most opens go there.
    weights = {topic: 1.0 / (rank + 1) for rank, topic in enumerate(rng.sample(topics, len(topics)))}
    ranking: list[int] = []  # memory ids, most likely to be opened first
    weeks: list[dict] = []
    opens = 0

    def add(count: int) -> list[int]:
        items = []
        for _ in range(count):
            topic = rng.choices(topics, weights=[weights[t] for t in topics])[0]
            title, body = note(rng, topic)
            items.append(MemoryInput(title=title, content=body))
        created = memory_create_many(owner=owner, items=items)
        ids = [m.pk for m in created]
        graph_tasks.extract_memories(ids)  # what the ingest task does within the minute
        return ids

    # The graph task and the cycle run here, in this process, instead of through the queue.
    content_changed.disconnect(dispatch_uid="graph.extract_changed_memories")
    try:
        with mock.patch("django_q.tasks.async_task"), time_machine.travel(start, tick=False) as clock:
            ids = add(sim.initial)
            ranking.extend(rng.sample(ids, len(ids)))
            manual = rng.sample(ids, min(sim.manual_tagged, len(ids)))
            for memory_id in manual:
                memory_tags_add(memory=Memory.objects.get(pk=memory_id), tags=["keep"])
            week_start = 0
            for day in range(1, sim.days + 1):
                clock.move_to(start + timedelta(days=day, hours=9))
                arriving = int(sim.new_per_day) + (rng.random() < sim.new_per_day % 1)
                if arriving:
                    fresh = add(arriving)
                    # A new note is likely to be used soon: it enters the ranking near the top.
                    for memory_id in fresh:
                        ranking.insert(min(len(ranking), int(rng.expovariate(1 / 8))), memory_id)
                for _ in range(sim.opens_per_day):
                    position = min(len(ranking) - 1, int(rng.paretovariate(1.2)) - 1)
                    memory_id = ranking[position]
                    memory_open(memory=Memory.objects.get(pk=memory_id))
                    opens += 1
                if rng.random() < 0.15:  # an old note comes back into use
                    revived = ranking.pop(rng.randrange(len(ranking) // 2, len(ranking)))
                    ranking.insert(rng.randrange(0, 5), revived)
                clock.move_to(start + timedelta(days=day, hours=23))
                cycle, _ = sleep_run_request(trigger=SleepRun.Trigger.SCHEDULED, owner=owner)
                sleep_run_execute(run_id=cycle.pk)
                if day % 7 == 0 or day == sim.days:
                    tiers = Counter(Memory.objects.filter(owner=owner).values_list("tier", flat=True))
                    week_moves = Counter(
                        f"{a}→{b}"
                        for a, b in TierMove.objects.filter(
                            memory__owner=owner, moved_at__gt=start + timedelta(days=week_start)
                        ).values_list("from_tier", "to_tier")
                    )
                    week_start = day
                    opened = Counter(
                        "never" if n == 0 else "once" if n == 1 else "2-9" if n < 10 else "10+"
                        for n in Memory.objects.filter(owner=owner).values_list("access_count", flat=True)
                    )
                    week = {
                        "week": (day + 6) // 7,
                        "day": day,
                        "memories": sum(tiers.values()),
                        "hot": tiers.get("hot", 0),
                        "warm": tiers.get("warm", 0),
                        "archive": tiers.get("archive", 0),
                        "manualTagged": Memory.objects.filter(owner=owner).exclude(manual_tags=[]).count(),
                        "manualTaggedArchived": Memory.objects.filter(owner=owner, tier="archive")
                        .exclude(manual_tags=[])
                        .count(),
                        "opens": opens,
                        "links": MemoryLink.objects.filter(owner=owner).count(),
                        "moves": dict(sorted(week_moves.items())),
                        "opened": {k: opened.get(k, 0) for k in ("never", "once", "2-9", "10+")},
                        "rules": rule_counts(Memory.objects.filter(owner=owner).values_list("tier", "tier_reason")),
                    }
                    weeks.append(week)
                    if progress:
                        progress(week)
    finally:
        content_changed.connect(graph_signals.extract_changed_memories, dispatch_uid="graph.extract_changed_memories")
    return weeks


RULES = (
    ("not accessed for", "archive_rules"),
    ("not created for", "archive_rules"),
    ("pinned", "pinned"),
    ("removed at", "removed"),
    ("priority", "priority"),
    ("decay", "decay"),
    ("within", "access"),
    ("recent connection", "recent_connections"),
    ("relationships (", "relationships"),
    ("manual tags", "manual_tags"),
    ("steps down", "step_down"),
    ("meets no rule", "gap"),
)


def rule_of(reason: str) -> str:
    """Which rule of memories.tier_rules decided a tier, from the reason it wrote ("3 relationships
    (≥ 3)" -> "relationships")."""
    for marker, rule in RULES:
        if marker in reason:
            return rule
    return "other"


def rule_counts(rows) -> dict[str, int]:
    """{"hot:relationships": 12, "warm:access": 30, ...}: how many memories each rule holds in each tier."""
    return dict(sorted(Counter(f"{tier}:{rule_of(reason or '')}" for tier, reason in rows).items()))


def chart_svg(weeks: list[dict], *, title: str = "Tiers over a simulated 90 days") -> str:
    """A stacked bar per week (hot, warm, archive), as a self-contained SVG."""
    colours = {"hot": "#e8590c", "warm": "#d4a106", "archive": "#64748b"}
    width, height, left, bottom, top = 640, 320, 48, 40, 40
    plot_w, plot_h = width - left - 20, height - bottom - top
    most = max((w["memories"] for w in weeks), default=1) or 1
    bar = plot_w / max(1, len(weeks))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{left}" y="22" font-size="14" font-weight="600">{title}</text>',
    ]
    for fraction in (0, 0.5, 1):  # the grid first, so the bars cover it
        y = top + plot_h * (1 - fraction)
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{round(most * fraction)}</text>')
        parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>')
    for i, week in enumerate(weeks):
        x = left + i * bar + bar * 0.15
        y = top + plot_h
        for tier in ("archive", "warm", "hot"):
            h = plot_h * week[tier] / most
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar * 0.7:.1f}" height="{h:.1f}" '
                f'fill="{colours[tier]}"><title>week {week["week"]}: {week[tier]} {tier}</title></rect>'
            )
        parts.append(
            f'<text x="{x + bar * 0.35:.1f}" y="{top + plot_h + 14}" text-anchor="middle">{week["week"]}</text>'
        )
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">week</text>')
    for i, tier in enumerate(("hot", "warm", "archive")):
        x = width - 220 + i * 70
        parts.append(
            f'<rect x="{x}" y="12" width="10" height="10" fill="{colours[tier]}"/>'
            f'<text x="{x + 14}" y="21">{tier}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
