"""Memory links: shared entities, shared topical tags, close meaning; refresh, reinforce, expire."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from graph.models import MemoryLink
from graph.services import graph_extract_memories, memory_links_expire, memory_links_refresh
from memories.services import memory_update
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def reasons(a, b) -> set[str]:
    low, high = sorted((a.pk, b.pk))
    return set(MemoryLink.objects.filter(source_id=low, target_id=high).values_list("reason", flat=True))


def test_memories_sharing_entities_are_linked_and_unrelated_ones_are_not(user):
    a = make_memory(user, "Alice works with the Product Team in San Francisco.")
    b = make_memory(user, "The Product Team hired Alice to lead the San Francisco launch.")
    c = make_memory(user, "Photosynthesis converts light into chemical energy in chloroplasts.")
    graph_extract_memories(memory_ids=[a.pk, b.pk, c.pk])
    result = memory_links_refresh(owner=user)
    assert "shared_entities" in reasons(a, b)
    assert not reasons(a, c) and not reasons(b, c)
    assert result["created"] >= 1
    link = MemoryLink.objects.get(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk), reason="shared_entities")
    assert 0 < link.score <= 1 and 0 < link.confidence <= 1


def test_shared_manual_tags_link_but_source_tags_alone_do_not(user):
    a = make_memory(user, "Budget figures for the spring.", manual_tags=["project-x"])
    b = make_memory(user, "Hiring plan for the autumn.", manual_tags=["project-x"])
    c = make_memory(user, "Recipe for a lemon cake.")
    memory_links_refresh(owner=user)
    assert "shared_tags" in reasons(a, b)
    assert "shared_tags" not in reasons(a, c)  # both carry the structural "upload" tag only


@pytest.mark.real_embedder  # a paraphrase: only the real model knows the two mean the same
def test_close_meaning_links_memories(user):
    a = make_memory(user, "The quarterly budget review showed costs rising in every department.")
    b = make_memory(user, "In the quarterly budget review, costs rose across all departments.")
    memory_links_refresh(owner=user)
    assert "semantic" in reasons(a, b)


def test_refreshing_twice_changes_nothing_and_reinforces_only_named_memories(user):
    a = make_memory(user, "Budget figures for the spring.", manual_tags=["project-x"])
    b = make_memory(user, "Hiring plan for the autumn.", manual_tags=["project-x"])
    memory_links_refresh(owner=user)
    # There is something to refresh: otherwise every count below would hold with no links at all.
    assert "shared_tags" in reasons(a, b)
    rows = list(MemoryLink.objects.values_list("source_id", "target_id", "reason", "score"))
    assert rows
    past = timezone.now() - timedelta(days=30)
    MemoryLink.objects.update(last_reinforced_at=past)
    again = memory_links_refresh(owner=user)
    assert again["created"] == 0 and again["expired"] == 0 and again["reinforced"] == 0
    assert list(MemoryLink.objects.values_list("source_id", "target_id", "reason", "score")) == rows
    assert MemoryLink.objects.filter(last_reinforced_at=past).count() == len(rows)
    named = memory_links_refresh(owner=user, memory_ids=[a.pk])
    assert named["reinforced"] == len(rows)
    assert not MemoryLink.objects.filter(last_reinforced_at=past).exists()


def test_a_link_expires_when_its_evidence_is_gone(user):
    a = make_memory(user, "Budget figures for the spring.", manual_tags=["project-x"])
    b = make_memory(user, "Hiring plan for the autumn.", manual_tags=["project-x"])
    memory_links_refresh(owner=user)
    assert "shared_tags" in reasons(a, b)
    memory_update(memory=b, manual_tags=["gardening"])
    assert memory_links_expire(owner=user) >= 1
    assert "shared_tags" not in reasons(a, b)


def test_links_never_cross_owners(user, other_user):
    a = make_memory(user, "Alice works with the Product Team in San Francisco.", manual_tags=["team"])
    b = make_memory(other_user, "Alice works with the Product Team in San Francisco.", manual_tags=["team"])
    graph_extract_memories(memory_ids=[a.pk, b.pk])
    memory_links_refresh(owner=user)
    memory_links_refresh(owner=other_user)
    assert not reasons(a, b)
    assert memory_links_refresh(owner=user, memory_ids=[b.pk]) == {
        "created": 0,
        "reinforced": 0,
        "unchanged": 0,
        "expired": 0,
    }
