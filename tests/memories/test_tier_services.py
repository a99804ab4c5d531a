"""Retiering through the memory services: bulk moves, links as relationships, pins and priority."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from graph.models import MemoryLink
from memories import services
from memories.models import Memory, MemoryChunk, TierMove
from tests.factories import make_memory
from tests.memories.helpers import age, link

# --- Tiers ----------------------------------------------------------------------------------------------


def test_bulk_retier_moves_memories_records_each_move_and_moves_their_chunks(user):
    old = age(make_memory(user, content="An old note nobody reads any more."), days=60, priority=0.1)
    tagged = age(make_memory(user, content="An old tagged note.", manual_tags=["keep"]), days=60, priority=0.1)
    result = services.memories_retier(owner=user)
    assert result.moves == {"hot→archive": 1, "hot→warm": 1}
    old.refresh_from_db()
    tagged.refresh_from_db()
    assert (old.tier, tagged.tier) == ("archive", "warm")
    assert tagged.tier_reason == "has manual tags"
    assert set(MemoryChunk.objects.filter(memory=old).values_list("tier", flat=True)) == {"archive"}
    move = TierMove.objects.get(memory=old)
    assert (move.from_tier, move.to_tier, move.cause) == ("hot", "archive", "sleep")
    assert "not accessed for 60 days" in move.reason


def test_bulk_retier_uses_the_same_few_queries_for_any_number_of_memories(user):
    memories = [
        age(make_memory(user, content=f"Note number {i} about things."), days=60, priority=0.1) for i in range(12)
    ]
    counts = []
    for ids in ([memories[0].pk], [m.pk for m in memories[1:]]):
        Memory.objects.filter(pk__in=ids).update(tier="hot")
        with CaptureQueriesContext(connection) as queries:
            services.memories_retier(memory_ids=ids)
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 8


def test_links_count_as_relationships_and_recent_connections(user):
    hub = age(make_memory(user, content="The hub memory."), days=60, priority=0.1)
    others = [make_memory(user, content=f"Spoke {i}.") for i in range(6)]
    for other in others[:3]:
        link(hub, other)
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert (hub.tier, hub.tier_reason) == ("warm", "3 relationships (≥ 3)")
    for other in others[3:]:
        link(hub, other, days_ago=1)
    link(hub, others[0], days_ago=1, reason=MemoryLink.Reason.SEMANTIC)  # a second reason is the same memory
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert (hub.tier, hub.tier_reason) == ("hot", "6 relationships (≥ 6)")


def test_only_linked_memories_in_use_count_as_relationships(user):
    # A note linked to six memories nobody has opened or added for two months is as forgotten as they
    # are: links into a dormant part of the collection keep nothing hot or warm.
    hub = age(make_memory(user, content="The hub memory."), days=60, priority=0.1)
    dormant = [age(make_memory(user, content=f"Old spoke {i}."), days=60, priority=0.1) for i in range(6)]
    for other in dormant:
        link(hub, other, days_ago=40)
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert hub.tier == "archive" and "0 relationships" in hub.tier_reason
    # Three of them come back into use (opened, or pinned): the hub is warm again, by its links alone.
    for other in dormant[:2]:
        services.memory_open(memory=other)
    services.memory_pin(memory=dormant[2], pinned=True)
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert (hub.tier, hub.tier_reason) == ("warm", "3 relationships (≥ 3)")


def test_recent_connections_count_links_made_this_week_to_memories_in_use(user):
    hub = age(make_memory(user, content="The hub memory."), days=60, priority=0.1)
    fresh = [make_memory(user, content=f"New note {i}.") for i in range(4)]
    for other in fresh:
        link(hub, other, days_ago=1)
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert (hub.tier, hub.tier_reason) == ("hot", "4 recent connections (≥ 4)")
    # A link refreshed this week to a memory idle for two months is recent but not active.
    Memory.objects.filter(pk=fresh[0].pk).update(created_at=hub.created_at)
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert (hub.tier, hub.tier_reason) == ("warm", "3 relationships (≥ 3)")


def test_pinning_moves_to_hot_at_once_and_overrides_everything(user):
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    memory.refresh_from_db()
    assert memory.tier == "archive"
    memory = services.memory_pin(memory=memory, pinned=True)
    assert (memory.tier, memory.tier_reason, memory.pinned) == ("hot", "pinned", True)
    assert set(memory.chunks.values_list("tier", flat=True)) == {"hot"}
    services.memories_retier(memory_ids=[memory.pk])
    memory.refresh_from_db()
    assert memory.tier == "hot"
    memory = services.memory_pin(memory=memory, pinned=False)
    assert memory.tier == "archive"  # unpinned, every archive condition holds again
    assert list(memory.tier_moves.values_list("cause", flat=True)) == ["pin", "pin", "sleep"]


def test_changing_priority_retiers_at_once(user):
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    memory = services.memory_update(memory=memory, priority=0.7)
    assert (memory.tier, memory.tier_reason) == ("hot", "priority 0.70 ≥ 0.65")
