"""MCP's memory_versions tool, over real HTTP: the list, one version with its diff, bad input, isolation."""

from __future__ import annotations

import pytest

from memories import services
from tests.factories import make_memory

pytestmark = pytest.mark.django_db(transaction=True)


def test_memory_versions_lists_and_reads_a_version_with_its_diff(agent, owner):
    memory = make_memory(owner, "The fog came in at dawn.", title="Fog")
    services.memory_update(memory=memory, content="The fog came in at dusk.")
    listed = agent.ok("memory_versions", {"memory_id": memory.pk})
    assert listed["count"] == 2 and [v["version"] for v in listed["items"]] == [2, 1]
    assert listed["items"][0]["changed"][0] == "content"
    one = agent.ok("memory_versions", {"memory_id": memory.pk, "version": 1})
    assert one["content"] == "The fog came in at dawn." and one["changes"] == []
    two = agent.ok("memory_versions", {"memory_id": memory.pk, "version": 2})
    (change,) = [c for c in two["changes"] if c["field"] == "content"]
    assert any(p["text"] == "dusk" for line in change["lines"] for p in line.get("parts", []) if p["op"] == "added")


def test_memory_versions_refuses_bad_numbers_and_other_users_memories(agent, stranger_agent, owner):
    memory = make_memory(owner, "The fog came in at dawn.")
    for number in (0, -2, 5, 10**15):
        assert "version" in agent.error("memory_versions", {"memory_id": memory.pk, "version": number})
    assert "no memory" in stranger_agent.error("memory_versions", {"memory_id": memory.pk})
