"""Token scopes over MCP, through the official client and over real HTTP: read-only tokens call every read
tool and no write tool (0 writes get through), a tool nobody classified is a write, the token is who
acts, and an expired or revoked token is a 401 at the transport."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from django.utils import timezone

from core.actors import ActorKind, current_actor
from core.models import ApiToken
from core.tokens import api_token_create, api_token_revoke
from kybernesis.mcp_server import server, tool_scope
from tests.factories import make_memory
from tests.kybernesis.mcp_client import TOOLS, Agent, run_async
from tests.kybernesis.test_mcp_transport import _database_url
from tests.kybernesis.test_token_scopes import database_state

pytestmark = pytest.mark.django_db(transaction=True)

# The tools a read-only token may call; any other tool, present or future, needs `write`.
READ_TOOLS = {
    "memory_search",
    "memory_get",
    "memory_list",
    "entity_search",
    "entity_neighbors",
    "trash_list",
    "import_status",
    "memory_versions",
}


@pytest.fixture
def memory(owner):
    return make_memory(owner, "Ada met Grace in London to plan the analytical engine.", manual_tags=["engine"])


def _agent(live_server, owner, **token_fields):
    token, key = api_token_create(user=owner, **token_fields)
    return token, Agent(live_server.url + "/mcp", key)


@pytest.fixture
def reader(live_server, owner):
    _, agent = _agent(live_server, owner, name="reader", scopes=["read"])
    yield agent
    agent.close()


def _arguments(tool, memory) -> dict:
    """Arguments that would work, so a refusal can only be the scope's."""
    known = {"memory_id": memory.pk, "content": "A new note.", "title": "Changed", "add": ["x"], "pinned": True}
    if tool.name == "sleep_run":
        return {"action": "start"}
    arguments = {}
    for name in tool.input_schema.get("required", []):
        kind = tool.input_schema["properties"].get(name, {}).get("type")
        arguments[name] = known.get(name, 1 if kind == "integer" else "x")
    if tool.name == "memory_update":
        arguments["title"] = "Changed"
    return arguments


def test_every_tool_is_classified_and_reads_are_read_only(reader):
    tools = reader.run(lambda s: s.list_tools()).tools
    assert {t.name for t in tools} >= TOOLS
    for tool in tools:
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None, tool.name
    assert {t.name for t in tools if t.annotations.read_only_hint} == READ_TOOLS


def test_a_read_only_token_is_refused_every_write_tool_and_nothing_changes(reader, memory):
    tools = [t for t in reader.run(lambda s: s.list_tools()).tools if not t.annotations.read_only_hint]
    assert {t.name for t in tools} >= {"memory_add", "memory_update", "memory_delete", "memory_tag", "memory_pin"}
    before = database_state()
    for tool in tools:
        message = reader.error(tool.name, _arguments(tool, memory))
        assert message == (
            f"this API token lacks the 'write' scope that the tool {tool.name} needs (its scopes: read)"
        ), tool.name
    assert database_state() == before


def test_a_read_only_token_calls_every_read_tool(reader, memory):
    assert [r["memoryId"] for r in reader.ok("memory_search", {"query": "analytical engine"})["results"]]
    assert reader.ok("memory_get", {"memory_id": memory.pk})["id"] == memory.pk
    assert reader.ok("memory_list")["count"] == 1
    assert "items" in reader.ok("entity_search")
    assert "no entity" in reader.error("entity_neighbors", {"name": "nobody at all"})  # its own error, not scope's
    assert reader.ok("sleep_run", {"action": "status"})["started"] is False
    assert reader.ok("sleep_run")["started"] is False  # status is the default
    resource = reader.run(lambda s: s.read_resource(f"memory://{memory.pk}"))
    assert "analytical engine" in resource.contents[0].text


def test_a_write_only_token_cannot_read(live_server, owner, memory):
    _, agent = _agent(live_server, owner, scopes=["write"])
    try:
        assert "lacks the 'read' scope" in agent.error("memory_search", {"query": "engine"})
        assert "lacks the 'read' scope" in agent.error("sleep_run", {"action": "status"})
        assert agent.ok("memory_pin", {"memory_id": memory.pk})["pinned"] is True
    finally:
        agent.close()


def test_a_tool_nobody_classified_needs_write(reader, live_server, owner):
    class Bare:
        name, annotations = "new_tool", None

    assert tool_scope(Bare(), {}) == "write"

    def unclassified_tool() -> str:
        return "it ran"

    server.add_tool(unclassified_tool, name="unclassified_tool", description="A tool without annotations.")
    try:
        assert "lacks the 'write' scope" in reader.error("unclassified_tool")
        _, writer = _agent(live_server, owner, name="writer")
        try:
            assert writer.run(lambda s: s.call_tool("unclassified_tool", {})).content[0].text == "it ran"
        finally:
            writer.close()
    finally:
        server.remove_tool("unclassified_tool")


def test_changes_over_mcp_name_the_token(live_server, owner, monkeypatch):
    from memories import services

    seen = []
    create = services.memory_create

    def recording(**kwargs):
        seen.append(current_actor())
        return create(**kwargs)

    monkeypatch.setattr("kybernesis.mcp_server.services.memory_create", recording)
    token, agent = _agent(live_server, owner, name="research agent")
    try:
        agent.ok("memory_add", {"content": "Stored by the agent."})
    finally:
        agent.close()
    assert [(a.kind, a.label, a.token_id, a.user_id) for a in seen] == [
        (ActorKind.MCP, "MCP with token 'research agent'", token.pk, owner.pk)
    ]


def _initialize(live_server, key: str) -> requests.Response:
    return requests.post(
        live_server.url + "/mcp",
        headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        timeout=30,
    )


def test_an_expired_token_is_a_401_at_the_transport(live_server, owner):
    token, key = api_token_create(user=owner, expires_at=timezone.now() + timedelta(days=1))
    assert _initialize(live_server, key).status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    response = _initialize(live_server, key)
    assert response.status_code == 401
    assert response.json()["error"]["message"].startswith("this API token expired on ")
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_a_revoked_token_is_a_401_from_its_next_request(live_server, owner):
    token, key = api_token_create(user=owner)
    assert _initialize(live_server, key).status_code == 200
    api_token_revoke(token=token)
    response = _initialize(live_server, key)
    assert response.status_code == 401
    assert response.json()["error"]["message"].startswith("this API token was revoked on ")


def _stdio(key: str, calls):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    repo = Path(__file__).resolve().parents[2]
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(repo / "manage.py"), "mcp_stdio"],
        cwd=str(repo),
        env={
            **os.environ,
            "DATABASE_URL": _database_url(),
            "KYBERNESIS_LOG_LEVEL": "WARNING",
            "KYBERNESIS_MCP_TOKEN": key,
        },
    )

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [await call(session) for call in calls]

    return run_async(main)


@pytest.mark.slow  # starts a Django process
def test_the_stdio_bridge_applies_the_tokens_scopes_and_a_revoke_mid_session(owner, memory):
    token, key = api_token_create(user=owner, name="console", scopes=["read"])

    def revoke_in_this_thread():
        from django.db import connection

        try:
            api_token_revoke(token=token)
        finally:
            connection.close()  # this thread's own connection: left open, the test database could not be dropped

    async def revoke(session):
        from asgiref.sync import sync_to_async

        await sync_to_async(revoke_in_this_thread, thread_sensitive=False)()

    found, refused, _, after = _stdio(
        key,
        [
            lambda s: s.call_tool(
                "memory_search", {"query": "analytical engine", "group_by": "memory", "min_score": 0}
            ),
            lambda s: s.call_tool("memory_add", {"content": "Not stored."}),
            revoke,
            lambda s: s.call_tool("memory_list", {}),
        ],
    )
    assert [r["title"] for r in found.structured_content["results"]] == [memory.title]
    assert refused.is_error and "lacks the 'write' scope" in refused.content[0].text
    assert after.is_error and after.content[0].text.startswith("this API token was revoked on ")
    assert owner.memories.count() == 1


@pytest.mark.slow  # starts a Django process
def test_the_stdio_bridge_refuses_an_expired_token_at_start(owner):
    token, key = api_token_create(user=owner)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(days=1))
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve().parents[2] / "manage.py"), "mcp_stdio", "--token", key],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "DATABASE_URL": _database_url()},
    )
    assert result.returncode != 0
    assert "this API token expired on" in result.stderr
