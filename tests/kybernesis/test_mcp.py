"""The MCP server at /mcp, driven by the official `mcp` client over real HTTP against the live server."""

from __future__ import annotations

import pytest
import requests
from mcp.shared.exceptions import MCPError

from memories.models import Memory
from sleep.models import SleepRun
from tests.factories import make_memory
from tests.kybernesis.mcp_client import TOOLS

pytestmark = pytest.mark.django_db(transaction=True)


def test_memory_get_shows_the_notices_and_memory_add_normalises_like_every_door(agent, owner):
    memory = make_memory(owner, "Page four.", title="Scan", notices=["pages 1–3: no text layer, read by OCR"])
    read = agent.ok("memory_get", {"memory_id": memory.pk})
    assert read["notices"] == ["pages 1–3: no text layer, read by OCR"]

    added = agent.ok("memory_add", {"content": "The conﬁguration\u200b.\n(cid:7)"})
    assert added["notices"] == ["Dropped 7 characters that were not text: (cid:…) codes from a PDF (7)."]
    assert agent.ok("memory_get", {"memory_id": added["id"]})["content"] == "The configuration.\n"


def test_a_chat_message_added_by_an_agent_is_classified_and_its_kind_can_be_changed(agent, owner):
    question = agent.ok("memory_add", {"content": "Wann ist der Zahnarzttermin", "source": "chat"})
    note = agent.ok("memory_add", {"content": "Is this a question?", "source": "chat", "kind": "note"})
    assert (question["kind"], question["metadata"]) == ("question", {"kind": "question"})
    assert (note["kind"], note["kindChosen"]) == ("note", True)
    changed = agent.ok("memory_update", {"memory_id": question["id"], "kind": "note"})
    assert (changed["kind"], changed["kindChosen"]) == ("note", True)
    back = agent.ok("memory_update", {"memory_id": question["id"], "kind": "auto"})
    assert (back["kind"], back["kindChosen"]) == ("question", False)
    assert "only a chat message has a kind" in agent.error("memory_add", {"content": "A recipe.", "kind": "note"})


def test_no_token_or_a_wrong_one_is_401_before_any_mcp(live_server):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer kyb_not-a-token"}, {"Authorization": "Basic eDp5"}):
        response = requests.post(live_server.url + "/mcp", json=body, headers={**headers, **auth}, timeout=30)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "Bearer" in response.json()["error"]["message"]


def test_the_tools_are_listed_with_json_schemas_and_the_memory_resource_template(agent):
    async def listing(session):
        return await session.list_tools(), await session.list_resource_templates()

    tools, templates = agent.run(listing)
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == TOOLS
    for tool in tools.tools:
        assert tool.description and tool.input_schema["type"] == "object"
    assert by_name["memory_add"].input_schema["required"] == ["content"]
    assert set(by_name["memory_add"].input_schema["properties"]) == {
        "title",
        "content",
        "tags",
        "priority",
        "metadata",
        "source",
        "kind",
    }
    assert by_name["memory_search"].input_schema["required"] == ["query"]
    assert [t.uri_template for t in templates.resource_templates] == ["memory://{memory_id}"]


def test_memory_tools_add_get_list_update_tag_pin_delete(agent, owner):
    added = agent.ok(
        "memory_add",
        {
            "content": "The lighthouse keeper logs the fog every night.",
            "title": "Lighthouse",
            "tags": ["Coast Guard"],
            "priority": 0.8,
            "metadata": {"shelf": 3},
        },
    )
    memory_id = added["id"]
    assert (added["title"], added["manualTags"], added["priority"], added["metadata"]) == (
        "Lighthouse",
        ["coast-guard"],
        0.8,
        {"shelf": 3},
    )
    assert Memory.objects.get(pk=memory_id).owner_id == owner.pk

    read = agent.ok("memory_get", {"memory_id": memory_id})
    assert read["content"] == "The lighthouse keeper logs the fog every night."
    assert read["accessCount"] == 1 and read["lastAccessedAt"] is not None  # a read counts as an access

    listed = agent.ok("memory_list", {"tags": ["coast-guard"]})
    assert [m["id"] for m in listed["items"]] == [memory_id] and listed["count"] == 1
    assert agent.ok("memory_list", {"tier": "archive"})["items"] == []

    updated = agent.ok("memory_update", {"memory_id": memory_id, "title": "Lighthouse log", "priority": 0.2})
    assert (updated["title"], updated["priority"]) == ("Lighthouse log", 0.2)

    tagged = agent.ok("memory_tag", {"memory_id": memory_id, "add": ["Fog"], "remove": ["coast-guard"]})
    assert tagged["manualTags"] == ["fog"]

    pinned = agent.ok("memory_pin", {"memory_id": memory_id})
    assert pinned["pinned"] is True and pinned["tier"] == "hot"
    assert agent.ok("memory_pin", {"memory_id": memory_id, "pinned": False})["pinned"] is False

    assert agent.ok("memory_delete", {"memory_id": memory_id}) == {"deleted": memory_id, "trashed": True}
    assert not Memory.objects.filter(pk=memory_id).exists()
    # Out of every tool but the trash's own.
    assert memory_id not in {m["id"] for m in agent.ok("memory_list", {})["items"]}
    assert f"no memory {memory_id}" in agent.error("memory_get", {"memory_id": memory_id})
    trash = agent.ok("trash_list", {})
    assert [m["id"] for m in trash["items"]] == [memory_id] and trash["items"][0]["purgeAt"]


def test_memory_search_gives_the_three_scores_and_snippets_and_takes_the_api_filters(agent, owner):
    make_memory(owner, "Sourdough needs a starter fed with flour and water.", manual_tags=["baking"])
    make_memory(owner, "The quarterly budget review moved to Thursday.", manual_tags=["work"])
    found = agent.ok("memory_search", {"query": "feeding a sourdough starter", "limit": 5})
    top = found["results"][0]
    assert top["title"].startswith("Sourdough")
    assert {"hybridScore", "vectorScore", "metadataScore", "snippet"} <= top.keys()
    assert top["hybridScore"] == pytest.approx(0.7 * top["vectorScore"] + 0.3 * top["metadataScore"], abs=1e-6)
    # Only plausibly relevant results by default; min_score 0 shows what the filter alone lets through.
    assert agent.ok("memory_search", {"query": "sourdough", "filters": {"tags": ["work"]}})["results"] == []
    filtered = agent.ok(
        "memory_search", {"query": "sourdough", "filters": {"tags": ["work"]}, "group_by": "memory", "min_score": 0}
    )
    assert [r["title"] for r in filtered["results"]] == ["The quarterly budget review moved to Thursday."]


def test_entity_tools_find_an_entity_and_its_neighbours(agent, owner):
    make_memory(owner, "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London.")
    found = agent.ok("entity_search", {"query": "Lovelace"})
    assert found["count"] >= 1 and found["items"][0]["name"] == "Ada Lovelace"
    entity_id = found["items"][0]["id"]
    neighbours = agent.ok("entity_neighbors", {"entity_id": entity_id})
    assert neighbours["name"] == "Ada Lovelace"
    assert [m["title"] for m in neighbours["memories"]] == [
        "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London."
    ]
    assert neighbours["relationships"], "a co-mentioned person is related"
    assert agent.ok("entity_neighbors", {"name": "ada lovelace"})["id"] == entity_id


def test_sleep_run_starts_a_cycle_and_reports_the_last_one(agent, owner):
    assert agent.ok("sleep_run") == {"started": False, "run": None}
    make_memory(owner, "A note for the sleep agent to tag and tier.")
    started = agent.ok("sleep_run", {"action": "start"})
    assert started["started"] is True and started["run"]["scope"] == "mine"
    status = agent.ok("sleep_run", {"action": "status"})
    assert status["run"]["id"] == started["run"]["id"]
    assert status["run"]["status"] in {"queued", "running", "completed"}


def test_the_memory_resource_reads_a_memory_and_counts_an_access(agent, owner):
    memory = make_memory(owner, "Resource body text.", title="Resource title")

    async def read(session):
        return await session.read_resource(f"memory://{memory.pk}")

    contents = agent.run(read).contents
    assert contents[0].text == "# Resource title\n\nResource body text."
    memory.refresh_from_db()
    assert memory.access_count == 1


# (tool, arguments, the argument the error must name)
BAD_ARGUMENTS = [
    ("memory_add", {}, "content"),
    ("memory_add", {"content": 5}, "content"),
    ("memory_add", {"content": "   "}, "content"),
    ("memory_add", {"content": "x", "priority": 2}, "priority"),
    ("memory_add", {"content": "x", "source": "fax"}, "source"),
    ("memory_add", {"content": "x", "tags": "not-a-list"}, "tags"),
    ("memory_add", {"content": "x", "metadata": [1, 2]}, "metadata"),
    ("memory_search", {"query": "  "}, "query"),
    ("memory_search", {"query": "x", "limit": 0}, "limit"),
    ("memory_search", {"query": "x", "filters": {"minPriority": 7}}, "minPriority"),
    ("memory_search", {"query": "x", "filters": {"colour": "red"}}, "colour"),
    ("memory_get", {"memory_id": "seven"}, "memory_id"),
    ("memory_get", {"memory_id": 999999}, "memory_id"),
    ("memory_list", {"tier": "cold"}, "tier"),
    ("memory_list", {"limit": 0}, "limit"),
    ("memory_list", {"offset": 10**20}, "offset"),  # not PostgreSQL's "bigint out of range"
    ("entity_search", {"offset": 10**20}, "offset"),
    ("memory_update", {"memory_id": 999999, "title": "x"}, "memory_id"),
    ("memory_tag", {"memory_id": "x"}, "memory_id"),
    ("memory_pin", {"memory_id": 1, "pinned": "perhaps"}, "pinned"),
    ("entity_search", {"types": ["planet"]}, "planet"),
    ("entity_neighbors", {}, "entity_id or name"),
    ("entity_neighbors", {"entity_id": 999999}, "entity_id"),
    ("sleep_run", {"action": "nap"}, "action"),
    # Text no database can hold, where a selector would have met it unchecked (a DataError, or a tag
    # filter dropped so that every memory was listed).
    ("entity_search", {"query": "a\x00b"}, "query"),
    ("entity_neighbors", {"name": "a\x00b"}, "name"),
    ("memory_list", {"tags": ["a\x00b"]}, "tags"),
    ("memory_tag", {"memory_id": 1, "remove": ["a\x00b"]}, "remove"),
]


def test_bad_arguments_are_a_tool_error_that_names_the_argument(agent):
    """Every case through one session, as an agent would send them (a live-server test each would
    spend about ten times the call on its set-up); each case that fails is named."""
    wrong = []
    for tool, arguments, named in BAD_ARGUMENTS:
        message = agent.error(tool, arguments)
        if named not in message:
            wrong.append(f"{tool}({arguments!r}): {message!r} does not name {named!r}")
    assert not wrong, "\n".join(wrong)


def test_tool_errors_from_the_services_match_the_api_messages(agent, owner, api):
    memory = make_memory(owner, "A memory with one manual tag.", manual_tags=["kept"])
    assert agent.error("memory_tag", {"memory_id": memory.pk, "remove": ["absent"]}).endswith(
        "tag: this memory has no manual tag 'absent'"
    )
    assert agent.error("memory_update", {"memory_id": memory.pk, "priority": 1.5}).endswith(
        "priority: priority must be from 0 to 1, got 1.5"
    )
    memory.refresh_from_db()
    assert memory.manual_tags == ["kept"] and memory.priority != 1.5  # nothing half-done


def test_a_failed_remove_leaves_the_added_tags_unadded(agent, owner):
    memory = make_memory(owner, "Tags move together or not at all.", manual_tags=["one"])
    agent.error("memory_tag", {"memory_id": memory.pk, "add": ["two"], "remove": ["absent"]})
    memory.refresh_from_db()
    assert memory.manual_tags == ["one"]


def test_every_tool_keeps_to_its_owner(agent, stranger_agent, owner, stranger):
    """The stranger's token reaches none of the owner's memories, entities or runs, tool by tool,
    and the owner's data is unchanged afterwards."""
    memory = make_memory(owner, "Grace Hopper found a moth in the Harvard Mark II relay.", manual_tags=["secret"])
    entity_id = agent.ok("entity_search", {"query": "Grace Hopper"})["items"][0]["id"]
    agent.ok("sleep_run", {"action": "start"})
    mine = f"no memory {memory.pk}"

    assert mine in stranger_agent.error("memory_get", {"memory_id": memory.pk})
    assert mine in stranger_agent.error("memory_update", {"memory_id": memory.pk, "title": "Stolen"})
    assert mine in stranger_agent.error("memory_delete", {"memory_id": memory.pk})
    assert mine in stranger_agent.error("memory_tag", {"memory_id": memory.pk, "add": ["x"]})
    assert mine in stranger_agent.error("memory_pin", {"memory_id": memory.pk})
    assert stranger_agent.ok("memory_search", {"query": "moth in a relay"})["results"] == []
    assert stranger_agent.ok("memory_list", {})["count"] == 0
    assert stranger_agent.ok("memory_list", {"tags": ["secret"]})["items"] == []
    assert stranger_agent.ok("entity_search", {"query": "Hopper"})["count"] == 0
    assert f"no entity {entity_id}" in stranger_agent.error("entity_neighbors", {"entity_id": entity_id})
    assert "no entity matches" in stranger_agent.error("entity_neighbors", {"name": "Grace Hopper"})
    assert stranger_agent.ok("sleep_run", {"action": "status"}) == {"started": False, "run": None}

    async def read(session):

        with pytest.raises(MCPError, match=f"no memory {memory.pk}"):
            await session.read_resource(f"memory://{memory.pk}")

    stranger_agent.run(read)

    added = stranger_agent.ok("memory_add", {"content": "The stranger's own note."})
    assert Memory.objects.get(pk=added["id"]).owner_id == stranger.pk
    memory.refresh_from_db()
    assert (memory.title, memory.manual_tags, memory.pinned, memory.access_count) == (
        "Grace Hopper found a moth in the Harvard Mark II relay.",
        ["secret"],
        False,
        0,
    )
    assert SleepRun.objects.filter(owner=stranger).count() == 0
