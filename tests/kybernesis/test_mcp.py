"""The MCP server at /mcp, driven by the official `mcp` client over real HTTP against the live server."""

from __future__ import annotations

import json

import anyio
import pytest
import requests
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from core.auth import api_token_create
from memories.models import Memory
from sleep.models import SleepRun
from tests.factories import UserFactory, make_memory

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {
    "memory_add",
    "memory_search",
    "memory_get",
    "memory_list",
    "memory_update",
    "memory_delete",
    "memory_tag",
    "memory_pin",
    "entity_search",
    "entity_neighbors",
    "sleep_run",
}


def run_async(main):
    """anyio.run in a thread of its own: the browser tests' Playwright keeps an event loop running in the
    main thread for the whole session, and a second loop cannot start where one runs."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main).result()


class Agent:
    """An MCP client as one token, with one session kept open for all its calls (as a real agent
    keeps one): `agent.run(fn)` awaits fn(session) there. The session lives in a task of its own on
    an event loop in a thread of its own (anyio's blocking portal), because the SDK's contexts must
    be left in the task that entered them; `close()` ends it."""

    def __init__(self, url: str, token: str):
        self.url, self.token = url, token
        self._portal_cm = self._portal = self._requests = None

    async def _serve(self, requests_in, *, task_status=anyio.TASK_STATUS_IGNORED):
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}"}) as http,
            streamable_http_client(self.url, http_client=http) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            task_status.started()
            async for fn, answer in requests_in:
                try:
                    answer["value"] = await fn(session)
                except Exception as exc:
                    answer["error"] = exc
                answer["done"].set()

    def run(self, fn):
        if self._portal is None:
            from anyio.from_thread import start_blocking_portal

            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
            send, receive = anyio.create_memory_object_stream(1)
            self._requests = send
            self._served = self._portal.start_task(self._serve, receive)[0]

        async def ask():
            answer = {"done": anyio.Event()}
            await self._requests.send((fn, answer))
            await answer["done"].wait()
            return answer

        answer = self._portal.call(ask)
        if "error" in answer:
            raise answer["error"]
        return answer["value"]

    def close(self):
        if self._portal is not None:
            self._portal.call(self._requests.aclose)
            self._served.result(timeout=30)
            self._portal_cm.__exit__(None, None, None)
            self._portal = None

    def call(self, name: str, arguments: dict | None = None):
        return self.run(lambda s: s.call_tool(name, arguments or {}))

    def ok(self, name: str, arguments: dict | None = None) -> dict:
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        assert result.structured_content == json.loads(result.content[0].text)
        return result.structured_content

    def error(self, name: str, arguments: dict | None = None) -> str:
        result = self.call(name, arguments)
        assert result.is_error, result.structured_content
        return result.content[0].text


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def stranger(db):
    return UserFactory()


def _agent(live_server, user):
    agent = Agent(live_server.url + "/mcp", api_token_create(user=user)[1])
    yield agent
    agent.close()


@pytest.fixture
def agent(live_server, owner):
    yield from _agent(live_server, owner)


@pytest.fixture
def stranger_agent(live_server, stranger):
    yield from _agent(live_server, stranger)


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

    assert agent.ok("memory_delete", {"memory_id": memory_id}) == {"deleted": memory_id}
    assert not Memory.objects.filter(pk=memory_id).exists()


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
        from mcp.shared.exceptions import MCPError

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


def _database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    host = db["HOST"]
    netloc = f"{db['USER']}:{db['PASSWORD']}@" if db.get("PASSWORD") else f"{db['USER']}@"
    if host.startswith("/"):
        return f"postgresql://{netloc}/{db['NAME']}?host={host}" + (f"&port={db['PORT']}" if db.get("PORT") else "")
    return f"postgresql://{netloc}{host}:{db['PORT'] or 5432}/{db['NAME']}"


def test_the_stdio_bridge_serves_the_same_tools_as_one_user(owner, stranger):
    import os
    import sys
    from pathlib import Path

    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    make_memory(owner, "Owner's note about tide tables.")
    make_memory(stranger, "Stranger's note about tide tables.")
    repo = Path(__file__).resolve().parents[2]
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(repo / "manage.py"), "mcp_stdio", "--user", owner.email],
        cwd=str(repo),
        env={**os.environ, "DATABASE_URL": _database_url(), "KYBERNESIS_LOG_LEVEL": "WARNING"},
    )

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            found = await session.call_tool("memory_search", {"query": "tide tables", "group_by": "memory"})
            bad = await session.call_tool("memory_get", {"memory_id": "x"})
            return {t.name for t in tools.tools}, found.structured_content, bad

    names, found, bad = run_async(main)
    assert names == TOOLS
    assert [r["title"] for r in found["results"]] == ["Owner's note about tide tables."]
    assert bad.is_error and "memory_id" in bad.content[0].text


def test_the_stdio_bridge_refuses_an_unknown_user():
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, str(repo / "manage.py"), "mcp_stdio", "--user", "nobody@example.com"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**__import__("os").environ, "DATABASE_URL": _database_url()},
    )
    assert result.returncode != 0
    assert "no active user 'nobody@example.com'" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_plain_http_client_of_each_protocol_revision_is_served(live_server, owner, version):
    """What a held-out client does on the wire: initialize, the initialized notification, then calls."""
    url = live_server.url + "/mcp"
    headers = {
        "Authorization": f"Bearer {api_token_create(user=owner)[1]}",
        "Accept": "application/json, text/event-stream",
    }
    init = requests.post(
        url,
        headers=headers,
        timeout=30,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "held-out", "version": "0"},
            },
        },
    )
    assert init.status_code == 200, init.text
    assert init.json()["result"]["protocolVersion"] == version
    assert "tools" in init.json()["result"]["capabilities"]
    headers["MCP-Protocol-Version"] = version
    note = requests.post(
        url, headers=headers, timeout=30, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert note.status_code == 202
    call = requests.post(
        url,
        headers=headers,
        timeout=30,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_list", "arguments": {}}},
    )
    assert call.status_code == 200 and call.headers["Content-Type"].startswith("application/json")
    assert call.json()["result"]["isError"] is False
    bad = requests.post(
        url,
        headers=headers,
        timeout=30,
        json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_get", "arguments": {}}},
    )
    assert bad.status_code == 200 and bad.json()["result"]["isError"] is True
    assert "memory_id" in bad.json()["result"]["content"][0]["text"]


def test_get_and_a_body_that_is_not_json_are_answered_not_crashed(live_server, owner):
    url = live_server.url + "/mcp"
    headers = {
        "Authorization": f"Bearer {api_token_create(user=owner)[1]}",
        "Accept": "application/json, text/event-stream",
    }
    assert requests.get(url, headers=headers, timeout=30).status_code == 405
    broken = requests.post(url, headers={**headers, "Content-Type": "application/json"}, data=b"{not json", timeout=30)
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == -32700


def _raw_call(live_server, owner, body: bytes, **headers) -> requests.Response:
    """A tools/call as a held-out client may send it: raw bytes, no initialize (the server is stateless)."""
    return requests.post(
        live_server.url + "/mcp",
        data=body,
        headers={
            "Authorization": f"Bearer {api_token_create(user=owner)[1]}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
            **headers,
        },
        timeout=60,
    )


def _call_body(tool: str, arguments_json: str) -> bytes:
    envelope = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "TOOL", "arguments": ARGS}}'
    return envelope.replace("TOOL", tool).replace("ARGS", arguments_json).encode()


@pytest.mark.parametrize(
    "tool, arguments, named",
    [
        ("memory_add", '{"content": "lone \\ud800 surrogate"}', "content: contains a lone surrogate"),
        ("memory_add", '{"content": "fine", "title": "\\udfff"}', "title: contains a lone surrogate"),
        ("memory_add", '{"content": "fine", "metadata": {"k": ["\\ud800"]}}', "metadata.k[0]: contains a lone"),
        ("memory_search", '{"query": "\\ud800"}', "query: contains a lone surrogate"),
        ("memory_add", '{"content": "fine", "metadata": {"score": NaN}}', "metadata.score: is nan"),
        ("memory_add", '{"content": "fine", "metadata": {"k": "a\\u0000b"}}', "metadata.k: contains a NUL byte"),
    ],
)
def test_text_json_cannot_carry_is_a_tool_error_naming_the_argument_once(live_server, owner, tool, arguments, named):
    """A lone surrogate made the SDK's parser refuse the whole message (a 400 parse error naming nothing),
    NaN in metadata was an unexplained tool error, and a clean-text message named its field twice."""
    response = _raw_call(live_server, owner, _call_body(tool, arguments))
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert named in text and text.count(named.split(":")[0] + ":") == 1, text
    assert not Memory.objects.filter(owner=owner).exists()


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("memory://abc", "a memory's id is a whole number"),
        ("memory://1.5", "a memory's id is a whole number"),
        ("memory://", "a memory's id is a whole number"),
        ("memory://" + "9" * 5000, "no memory 999"),
        ("memory://99999999999999999999", "no memory"),
        ("memory://424242", "no memory 424242"),
    ],
)
def test_a_memory_uri_without_a_memory_is_an_error_that_says_why(agent, uri, message):
    """They were "Error creating resource from template memory://abc" from the SDK's conversion."""

    async def read(session):
        with pytest.raises(MCPError) as raised:
            await session.read_resource(uri)
        return raised.value.error.message

    assert message in agent.run(read)


def test_an_escaped_emoji_is_not_taken_for_a_lone_surrogate(live_server, owner):
    response = _raw_call(live_server, owner, _call_body("memory_add", '{"content": "A brain \\ud83e\\udde0 note."}'))
    assert response.json()["result"]["isError"] is False, response.text
    assert Memory.objects.get(owner=owner).content == "A brain \U0001f9e0 note."


def test_a_lone_surrogate_outside_the_arguments_is_an_mcp_error_not_a_parse_failure(live_server, owner):
    body = b'{"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": "memory://1\\ud800"}}'
    response = _raw_call(live_server, owner, body)
    assert response.status_code == 200 and response.json()["id"] == 8 and response.json()["error"], response.text


def test_a_memory_over_the_sdks_default_body_limit_reaches_the_tool(live_server, owner, settings):
    """The SDK refuses bodies over 4 MB as plain text by default; the API takes a memory up to
    KYBERNESIS_MAX_MEMORY_CHARS within DATA_UPLOAD_MAX_MEMORY_SIZE, and so must memory_add."""
    settings.KYBERNESIS_MAX_MEMORY_CHARS = 1000  # the tool's own limit answers, without embedding 5 MB
    content = "x" * 5_000_000
    response = _raw_call(live_server, owner, _call_body("memory_add", json.dumps({"content": content})))
    assert response.status_code == 200, response.text[:200]
    assert response.json()["result"]["content"][0]["text"].endswith(
        "content: content is 5,000,000 characters; the limit is 1,000"
    )


def test_a_refusal_the_sdk_words_as_plain_text_comes_back_as_json_rpc(live_server, owner):
    response = _raw_call(live_server, owner, _call_body("memory_list", "{}"), **{"Content-Type": "text/plain"})
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json()["error"]["message"] == "Invalid Content-Type header"
