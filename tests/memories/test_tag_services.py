"""Manual and auto tags through the memory services: normalised, kept apart, retagged by the rule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories import services
from memories.models import Memory
from tests.factories import make_memory

# --- Ingest -----------------------------------------------------------------------------------------


def test_a_new_memory_is_hot_with_a_reason_and_a_computed_priority(user):
    memory = make_memory(user, content="Notes from the kickoff about the onboarding flow redesign.")
    assert memory.tier == "hot" and memory.tier_reason.startswith("decay 0.00")
    assert memory.priority == pytest.approx(
        0.22
        + 0.06
        * (0.0 if len(memory.content) <= 100 else min(1, __import__("math").log10(len(memory.content) / 100) / 3)),
        abs=1e-3,
    )
    assert memory.auto_tags[0]["tag"] == "upload"
    assert len(memory.auto_tags) <= 6 and memory.auto_tagged_hash == memory.content_hash


def test_a_priority_given_at_ingest_is_kept(user):
    assert make_memory(user, priority=0.9).priority == 0.9


# --- Manual tags --------------------------------------------------------------------------------------


def test_manual_tags_are_added_normalised_and_kept_apart_from_auto_tags(user):
    memory = make_memory(user)
    memory = services.memory_tags_add(memory=memory, tags=["  Project X ", "review needed", "project x"])
    assert memory.manual_tags == ["project-x", "review-needed"]
    assert memory.tags[:2] == ["project-x", "review-needed"]
    assert set(memory.tags) == {*memory.manual_tags, *(t["tag"] for t in memory.auto_tags)}
    memory = services.memory_tag_remove(memory=memory, tag="Project X")
    assert memory.manual_tags == ["review-needed"] and "project-x" not in memory.tags


def test_manual_tags_survive_auto_retagging(user):
    memory = make_memory(user, manual_tags=["keep-me"])
    Memory.objects.filter(pk=memory.pk).update(auto_tagged_at=timezone.now() - timedelta(days=8))
    result = services.memories_autotag(memory_ids=[memory.pk])
    memory.refresh_from_db()
    assert result.processed == 1 and memory.manual_tags == ["keep-me"] and memory.tags[0] == "keep-me"


def test_retagging_skips_memories_tagged_within_seven_days(user):
    fresh = make_memory(user, content="Fresh note about gardening tomatoes.")
    stale = make_memory(user, content="Stale note about sailing boats.")
    Memory.objects.filter(pk=stale.pk).update(
        auto_tagged_at=timezone.now() - timedelta(days=7, minutes=1), auto_tags=[]
    )
    before = Memory.objects.get(pk=fresh.pk).auto_tagged_at
    result = services.memories_autotag(memory_ids=[fresh.pk, stale.pk])
    assert (result.processed, result.changed) == (2, 1)
    assert Memory.objects.get(pk=fresh.pk).auto_tagged_at == before
    assert Memory.objects.get(pk=stale.pk).auto_tags


def test_a_memory_whose_tagging_fails_is_reported_and_the_rest_are_tagged(user, monkeypatch):
    from memories import auto_tags

    good = make_memory(user, content="Sailing boats need their rigging checked every spring.")
    bad = make_memory(user, content="This text breaks the keyword extractor.")
    Memory.objects.filter(pk__in=[good.pk, bad.pk]).update(auto_tagged_at=None, auto_tags=[])
    real = auto_tags.auto_tags_for

    def fragile(**kwargs):
        if "breaks" in kwargs["content"]:
            raise ValueError("extractor gave up")
        return real(**kwargs)

    monkeypatch.setattr(auto_tags, "auto_tags_for", fragile)
    result = services.memories_autotag(memory_ids=[good.pk, bad.pk])
    assert result.processed == 2 and result.failed == [(bad.pk, "ValueError: extractor gave up")]
    good.refresh_from_db()
    bad.refresh_from_db()
    assert any("sailing" in t or "rigging" in t for t in good.tags) and good.auto_tagged_hash == good.content_hash
    assert bad.auto_tags == [] and bad.auto_tagged_at is None  # left as it was, due again next cycle


def test_a_content_change_retags_at_once(user):
    memory = make_memory(user, content="Sourdough starter feeding schedule and hydration.")
    memory = services.memory_update(memory=memory, content="Kubernetes cluster upgrade runbook for the platform.")
    tags = [t["tag"] for t in memory.auto_tags]
    assert not any("sourdough" in t for t in tags) and any("kubernetes" in t or "cluster" in t for t in tags)
    assert memory.auto_tagged_hash == memory.content_hash


@pytest.mark.parametrize(
    "write",
    [
        lambda m: services.memory_update(memory=m, manual_tags=["a", "b"]),
        lambda m: services.memory_update(memory=m, content="Entirely new text about rockets."),
        lambda m: services.memory_update(memory=m, metadata={"filename": "x.pdf"}),
        lambda m: services.memory_tags_add(memory=m, tags=["c"]),
        lambda m: services.memory_pin(memory=m, pinned=True),
        lambda m: services.memories_autotag(memory_ids=[m.pk], force=True),
    ],
)
def test_combined_tags_stay_consistent_after_every_kind_of_write(user, write):
    memory = make_memory(user, manual_tags=["first"])
    write(memory)
    memory.refresh_from_db()
    expected = list(dict.fromkeys([*memory.manual_tags, *(t["tag"] for t in memory.auto_tags)]))
    assert memory.tags == expected


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ([""], "cannot be empty"),
        (["x" * 65], "65 characters"),
        ([], "at least one tag"),
    ],
)
def test_bad_manual_tags_are_refused(user, tags, message):
    memory = make_memory(user)
    with pytest.raises(services.MemoryInputError, match=message):
        services.memory_tags_add(memory=memory, tags=tags)


def test_the_fifty_first_manual_tag_is_refused_and_nothing_changes(user):
    memory = make_memory(user, manual_tags=[f"t{i}" for i in range(50)])
    with pytest.raises(services.MemoryInputError, match="at most 50 manual tags"):
        services.memory_tags_add(memory=memory, tags=["one-more"])
    memory.refresh_from_db()
    assert len(memory.manual_tags) == 50 and "one-more" not in memory.tags


@pytest.mark.parametrize(("tagged_days_ago", "same_hash"), [(None, True), (6.9, True), (7.01, True), (1, False)])
def test_the_retag_filter_selects_exactly_what_needs_retag_says(user, tagged_days_ago, same_hash):
    from memories.auto_tags import needs_retag, retag_due_filter

    now = timezone.now()
    memory = make_memory(user, content="Notes on the garden shed roof.")
    tagged_at = None if tagged_days_ago is None else now - timedelta(days=tagged_days_ago)
    Memory.objects.filter(pk=memory.pk).update(
        auto_tagged_at=tagged_at, auto_tagged_hash=memory.content_hash if same_hash else "other"
    )
    memory.refresh_from_db()
    due = needs_retag(
        auto_tagged_at=memory.auto_tagged_at,
        auto_tagged_hash=memory.auto_tagged_hash,
        content_hash=memory.content_hash,
        now=now,
    )
    assert due is (tagged_days_ago is None or tagged_days_ago > 7 or not same_hash)
    assert Memory.objects.filter(retag_due_filter(now), pk=memory.pk).exists() is due
