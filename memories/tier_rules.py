"""The tier policy and the decay formula: plain functions from a memory's facts to a tier, no Django.

The rules are the spec's ("Memory Tiers"), checked in this order:

1. Pinned memories are hot, whatever else holds. Then a memory whose source is gone (a connector's
   file deleted or trashed remotely) is archived, until the file comes back.
2. Hot if ANY of: priority >= 0.65, decay <= 0.25, accessed within 3 days, 6+ relationships,
   4+ recent active connections (links created or reinforced in the last 7 days).
3. Warm if ANY of: priority >= 0.3, accessed within 21 days, has manual tags, 3+ relationships.
4. Archive if ALL of: not accessed for 30+ days, priority < 0.3, decay >= 0.7, 2 or fewer
   relationships and no recent connections, no manual tags.
5. The gap rule, for a memory that fits none of the above (for example unused for 25 days at low
   priority, or 40 days unused but with decay still under 0.7): a warm or archived memory keeps its
   tier, and a hot one steps down to warm. A memory therefore leaves hot one step at a time and
   never jumps to archive before every archive condition holds.

"Accessed" means the last access, or the creation time for a memory never opened, so a new memory
is not treated as long-forgotten.

"Relationships" are the distinct linked memories that are in use: opened or created within
`active_link_days` (21, the warm access window), or pinned. "Recent active connections" are those of
them whose link was made or reinforced within `recent_connection_days` (7). The spec does not say
what a relationship is; counting every link let a busy topic keep all of its notes hot for ever
(every note of it had 6+ links), however long ago anyone opened them. A note linked to what is being
used stays hot or warm; a note linked only to forgotten ones fades with them, and comes back when
one of them is opened or a new note links to it.

Decay (0 = fresh, 1 = forgotten) is exponential in the days since that same moment:

    decay = 1 - 2 ** (-idle_days / half_life)
    half_life = base_half_life · (1 + access_boost · ln(1 + access_count)) · (1 + priority_boost · priority)

Each access and a higher priority make a memory fade more slowly. With the defaults (14 days,
0.5, 1.0) an unopened memory of priority 0.2 has a half-life of 16.8 days: decay passes 0.25 after
about 7 days and 0.7 after about 29 days.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from datetime import datetime

HOT, WARM, ARCHIVE = "hot", "warm", "archive"
DAY_SECONDS = 86400.0


@dataclass(frozen=True)
class TierPolicy:
    """Every threshold of the rules; the defaults are the spec's values."""

    hot_priority: float = 0.65
    hot_max_decay: float = 0.25
    hot_access_days: float = 3
    hot_relationships: int = 6
    hot_recent_connections: int = 4
    recent_connection_days: float = 7
    active_link_days: float = 21
    warm_priority: float = 0.3
    warm_access_days: float = 21
    warm_relationships: int = 3
    archive_idle_days: float = 30
    archive_max_priority: float = 0.3
    archive_min_decay: float = 0.7
    archive_max_relationships: int = 2
    decay_half_life_days: float = 14
    decay_access_boost: float = 0.5
    decay_priority_boost: float = 1.0

    @classmethod
    def from_settings(cls) -> TierPolicy:
        """The policy with each field overridden by KYBERNESIS_TIER_<FIELD> where that is set
        (settings.KYBERNESIS_TIER_POLICY holds those values, as strings or numbers)."""
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        values = {}
        for f in fields(cls):
            raw = settings.KYBERNESIS_TIER_POLICY.get(f.name)
            if raw is None:
                continue
            try:
                values[f.name] = (int if f.type == "int" else float)(raw)
            except (TypeError, ValueError):
                raise ImproperlyConfigured(f"KYBERNESIS_TIER_{f.name.upper()} must be a number, got {raw!r}") from None
        return cls(**values)


@dataclass(frozen=True)
class TierFacts:
    """What the rules look at. `relationships` counts distinct linked memories; `recent_connections`
    counts links created or reinforced within `recent_connection_days`."""

    tier: str
    priority: float
    pinned: bool
    has_manual_tags: bool
    created_at: datetime
    last_accessed_at: datetime | None
    access_count: int = 0
    relationships: int = 0
    recent_connections: int = 0
    removed_at_source: bool = False


@dataclass(frozen=True)
class TierDecision:
    tier: str
    decay: float
    reason: str


def _idle_days(facts: TierFacts, now: datetime) -> float:
    since = facts.last_accessed_at or facts.created_at
    return max(0.0, (now - since).total_seconds() / DAY_SECONDS)


def decay_score(facts: TierFacts, *, now: datetime, policy: TierPolicy) -> float:
    """Exponential decay since the last access (or creation), slowed by accesses and priority."""
    half_life = (
        policy.decay_half_life_days
        * (1 + policy.decay_access_boost * math.log1p(max(facts.access_count, 0)))
        * (1 + policy.decay_priority_boost * facts.priority)
    )
    return round(1.0 - 2.0 ** (-_idle_days(facts, now) / half_life), 4)


def _days(value: float) -> str:
    return f"{value:g} day{'s' if value != 1 else ''}"


def evaluate_tier(facts: TierFacts, *, now: datetime, policy: TierPolicy) -> TierDecision:
    """The tier a memory belongs in now, with its decay and the first rule that decided it.

    The spec's rules in order: pinned, removed at its source, then the hot rules, the warm rules and
    the archive rule; a memory that meets none steps down from hot to warm or stays where it is."""
    decay = decay_score(facts, now=now, policy=policy)
    idle = _idle_days(facts, now)
    accessed = "accessed" if facts.last_accessed_at else "created"
    if facts.pinned:
        return TierDecision(tier=HOT, decay=decay, reason="pinned")
    if facts.removed_at_source:
        return TierDecision(tier=ARCHIVE, decay=decay, reason="removed at its source")
    for tier, rules in ((HOT, _hot_reason), (WARM, _warm_reason), (ARCHIVE, _archive_reason)):
        reason = rules(facts, decay=decay, idle=idle, accessed=accessed, policy=policy)
        if reason:
            return TierDecision(tier=tier, decay=decay, reason=reason)
    if facts.tier == HOT:
        return TierDecision(tier=WARM, decay=decay, reason="no longer meets a hot or warm rule; steps down one tier")
    return TierDecision(tier=facts.tier, decay=decay, reason=f"meets no rule; stays {facts.tier}")


def _hot_reason(facts: TierFacts, *, decay: float, idle: float, accessed: str, policy: TierPolicy) -> str | None:
    """The first hot rule the memory meets, as its reason, or None."""
    if facts.priority >= policy.hot_priority:
        return f"priority {facts.priority:.2f} ≥ {policy.hot_priority:g}"
    if decay <= policy.hot_max_decay:
        return f"decay {decay:.2f} ≤ {policy.hot_max_decay:g}"
    if idle <= policy.hot_access_days:
        return f"{accessed} within {_days(policy.hot_access_days)}"
    if facts.relationships >= policy.hot_relationships:
        return f"{facts.relationships} relationships (≥ {policy.hot_relationships})"
    if facts.recent_connections >= policy.hot_recent_connections:
        return f"{facts.recent_connections} recent connections (≥ {policy.hot_recent_connections})"
    return None


def _warm_reason(facts: TierFacts, *, decay: float, idle: float, accessed: str, policy: TierPolicy) -> str | None:
    """The first warm rule the memory meets, as its reason, or None (decay plays no part here)."""
    if facts.priority >= policy.warm_priority:
        return f"priority {facts.priority:.2f} ≥ {policy.warm_priority:g}"
    if idle <= policy.warm_access_days:
        return f"{accessed} within {_days(policy.warm_access_days)}"
    if facts.has_manual_tags:
        return "has manual tags"
    if facts.relationships >= policy.warm_relationships:
        return f"{facts.relationships} relationships (≥ {policy.warm_relationships})"
    return None


def _archive_reason(facts: TierFacts, *, decay: float, idle: float, accessed: str, policy: TierPolicy) -> str | None:
    """The reason the memory is archived when it meets every part of the archive rule, or None."""
    if (
        idle >= policy.archive_idle_days
        and facts.priority < policy.archive_max_priority
        and decay >= policy.archive_min_decay
        and facts.relationships <= policy.archive_max_relationships
        and facts.recent_connections == 0
    ):
        return (
            f"not {accessed} for {_days(math.floor(idle))}, priority {facts.priority:.2f}, "
            f"decay {decay:.2f}, {facts.relationships} relationships"
        )
    return None


# --- Default priority ----------------------------------------------------------------------------

SOURCE_PRIORITY = {"upload": 0.22, "chat": 0.12, "connector": 0.10}
MANUAL_TAG_PRIORITY = 0.1
MAX_TAG_BONUS_TAGS = 3
LENGTH_PRIORITY = 0.06
MAX_DEFAULT_PRIORITY = 0.6


def default_priority(*, source: str, manual_tag_count: int, content_chars: int) -> float:
    """The priority a memory gets when nobody sets one. Three explainable parts:

    - the source: a file someone chose to upload (0.22) says more than a chat message (0.12) or an
      item a connector synced in bulk (0.10);
    - manual tags: each of the first three adds 0.1, since tagging is a sign that it matters (one tag
      reaches the warm threshold of 0.3, as manual tags keep a memory warm anyway);
    - length: up to 0.06, growing with log10 of the length from 100 characters to 100,000, since a
      substantial document tends to be reference material.

    The result is capped at 0.6, below the hot threshold of 0.65: only a person makes a memory hot
    by priority alone.
    """
    base = SOURCE_PRIORITY.get(source, 0.12)
    tags = MANUAL_TAG_PRIORITY * min(max(manual_tag_count, 0), MAX_TAG_BONUS_TAGS)
    length = LENGTH_PRIORITY * min(1.0, max(0.0, math.log10(max(content_chars, 1) / 100) / 3))
    return round(min(MAX_DEFAULT_PRIORITY, base + tags + length), 3)
