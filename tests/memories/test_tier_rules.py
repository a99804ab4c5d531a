"""The tier rules of the spec, table-driven at their boundaries, and the decay formula pinned to values."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from memories.tier_rules import (
    ARCHIVE,
    HOT,
    WARM,
    TierFacts,
    TierPolicy,
    decay_score,
    default_priority,
    evaluate_tier,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
POLICY = TierPolicy()


def facts(**overrides) -> TierFacts:
    """A memory that meets no hot or warm rule and every archive rule but the ones a test overrides:
    opened 40 days ago, priority 0.1, no links, no manual tags."""
    base = TierFacts(
        tier=WARM,
        priority=0.1,
        pinned=False,
        has_manual_tags=False,
        created_at=NOW - timedelta(days=400),
        last_accessed_at=NOW - timedelta(days=40),
        access_count=0,
        relationships=0,
        recent_connections=0,
    )
    return replace(base, **overrides)


def days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def tier_of(f: TierFacts, policy: TierPolicy = POLICY) -> str:
    return evaluate_tier(f, now=NOW, policy=policy).tier


# A policy whose decay never reaches the hot threshold lets the access-time rules be tested alone.
SLOW_DECAY = replace(POLICY, hot_max_decay=0.0)


@pytest.mark.parametrize(
    ("overrides", "policy", "expected"),
    [
        # Hot: priority >= 0.65
        ({"priority": 0.65}, POLICY, HOT),
        ({"priority": 0.6499}, POLICY, WARM),
        # Hot: accessed within 3 days (exactly 3 days counts)
        ({"last_accessed_at": days_ago(3)}, SLOW_DECAY, HOT),
        ({"last_accessed_at": days_ago(3.01)}, SLOW_DECAY, WARM),
        # Hot: 6+ relationships
        ({"relationships": 6}, POLICY, HOT),
        ({"relationships": 5}, POLICY, WARM),
        # Hot: 4+ recent active connections
        ({"recent_connections": 4, "relationships": 4}, POLICY, HOT),
        ({"recent_connections": 3, "relationships": 3}, POLICY, WARM),
        # Hot: pinned
        ({"pinned": True}, POLICY, HOT),
        # Warm: priority >= 0.3
        ({"priority": 0.3}, POLICY, WARM),
        ({"priority": 0.2999, "tier": HOT, "last_accessed_at": days_ago(25)}, POLICY, WARM),  # gap rule steps down
        ({"priority": 0.2999, "tier": ARCHIVE, "last_accessed_at": days_ago(25)}, POLICY, ARCHIVE),
        # Warm: accessed within 21 days (exactly 21 counts)
        ({"last_accessed_at": days_ago(21), "tier": ARCHIVE}, SLOW_DECAY, WARM),
        ({"last_accessed_at": days_ago(21.01), "tier": ARCHIVE}, SLOW_DECAY, ARCHIVE),
        # Warm: manual tags
        ({"has_manual_tags": True, "tier": ARCHIVE}, POLICY, WARM),
        # Warm: 3+ relationships
        ({"relationships": 3, "tier": ARCHIVE}, POLICY, WARM),
        ({"relationships": 2, "tier": WARM}, POLICY, ARCHIVE),
    ],
)
def test_hot_and_warm_rules_hold_at_their_boundaries(overrides, policy, expected):
    assert tier_of(facts(**overrides), policy) == expected


def test_archive_needs_every_condition_and_each_one_alone_blocks_it():
    assert tier_of(facts()) == ARCHIVE
    # not accessed for 30+ days: 29.9 days of idleness is a gap, so a warm memory stays warm
    lenient = replace(POLICY, archive_min_decay=0.0, warm_access_days=0)
    assert tier_of(facts(last_accessed_at=days_ago(30)), lenient) == ARCHIVE
    assert tier_of(facts(last_accessed_at=days_ago(29.9)), lenient) == WARM
    # low priority (< 0.3)
    assert tier_of(facts(priority=0.3)) == WARM
    # decay >= 0.7
    strict = replace(POLICY, archive_min_decay=0.99)
    assert tier_of(facts(), strict) == WARM
    # 2 or fewer relationships and no recent edges
    assert tier_of(facts(relationships=2)) == ARCHIVE
    assert tier_of(facts(relationships=1, recent_connections=1)) == WARM
    # no manual tags
    assert tier_of(facts(has_manual_tags=True)) == WARM


@pytest.mark.parametrize(("current", "expected"), [(HOT, WARM), (WARM, WARM), (ARCHIVE, ARCHIVE)])
def test_gap_rule_keeps_warm_and_archive_and_steps_hot_down_to_warm(current, expected):
    # 25 days idle at low priority: not hot, not warm (over 21 days), not archive (under 30 days).
    decision = evaluate_tier(facts(tier=current, last_accessed_at=days_ago(25)), now=NOW, policy=POLICY)
    assert decision.tier == expected
    assert "no rule" in decision.reason or "steps down" in decision.reason


def test_pinning_overrides_every_archive_condition():
    decision = evaluate_tier(facts(pinned=True, tier=ARCHIVE), now=NOW, policy=POLICY)
    assert (decision.tier, decision.reason) == (HOT, "pinned")


def test_a_never_opened_memory_counts_from_its_creation():
    new = facts(last_accessed_at=None, created_at=days_ago(1), tier=HOT)
    assert evaluate_tier(new, now=NOW, policy=POLICY).tier == HOT
    old = facts(last_accessed_at=None, created_at=days_ago(90))
    assert evaluate_tier(old, now=NOW, policy=POLICY).tier == ARCHIVE


@pytest.mark.parametrize(
    ("idle_days", "access_count", "priority", "expected"),
    [
        (0, 0, 0.0, 0.0),
        (14, 0, 0.0, 0.5),  # one half-life
        (28, 0, 0.0, 0.75),  # two half-lives
        (14, 0, 1.0, 0.2929),  # priority 1 doubles the half-life: 1 - 2^-0.5
        (14, 3, 0.0, 0.3359),  # 3 accesses: half-life 14 · (1 + 0.5 · ln 4) = 23.70 days
        (30, 0, 0.2, 0.7101),  # half-life 16.8 days: archive-level decay after a month
    ],
)
def test_decay_formula_values(idle_days, access_count, priority, expected):
    f = facts(last_accessed_at=days_ago(idle_days), access_count=access_count, priority=priority)
    assert decay_score(f, now=NOW, policy=POLICY) == pytest.approx(expected, abs=1e-4)


def test_decay_rises_with_idleness_and_falls_with_use():
    scores = [decay_score(facts(last_accessed_at=days_ago(d)), now=NOW, policy=POLICY) for d in (1, 5, 20, 60)]
    assert scores == sorted(scores) and 0 < scores[0] < scores[-1] < 1
    used = decay_score(facts(access_count=20), now=NOW, policy=POLICY)
    assert used < decay_score(facts(), now=NOW, policy=POLICY)


def test_decay_is_recomputed_on_every_evaluation():
    f = facts(last_accessed_at=days_ago(10))
    assert (
        evaluate_tier(f, now=NOW, policy=POLICY).decay
        < evaluate_tier(f, now=NOW + timedelta(days=10), policy=POLICY).decay
    )


@pytest.mark.parametrize(
    ("source", "tags", "chars", "expected"),
    [
        ("upload", 0, 100, 0.22),
        ("upload", 0, 100_000, 0.28),
        ("chat", 0, 50, 0.12),
        ("connector", 0, 100, 0.10),
        ("chat", 1, 100, 0.22),
        ("upload", 2, 100, 0.42),
        ("upload", 10, 10_000_000, 0.58),  # three tags count at most
    ],
)
def test_default_priority_follows_source_tags_and_length(source, tags, chars, expected):
    assert default_priority(source=source, manual_tag_count=tags, content_chars=chars) == pytest.approx(expected)


def test_default_priority_never_makes_a_memory_hot_by_itself():
    assert default_priority(source="upload", manual_tag_count=50, content_chars=5_000_000) < POLICY.hot_priority


def test_a_memory_removed_at_its_source_stays_archived_unless_pinned():
    fresh = facts(removed_at_source=True, priority=0.9, last_accessed_at=days_ago(0), tier=HOT)
    assert (tier_of(fresh), evaluate_tier(fresh, now=NOW, policy=POLICY).reason) == (ARCHIVE, "removed at its source")
    assert tier_of(replace(fresh, pinned=True)) == HOT
