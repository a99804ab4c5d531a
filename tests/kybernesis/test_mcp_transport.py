"""The MCP server's transports: the stdio bridge, plain HTTP clients of each protocol revision, and
bodies, URIs and refusals the SDK would otherwise mishandle."""

from __future__ import annotations

import json

import pytest
import requests
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from core.auth import api_token_create
from memories.models import Memory
from tests.factories import make_memory
from tests.kybernesis.mcp_client import TOOLS, run_async

pytestmark = pytest.mark.django_db(transaction=True)


def _database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    host = db["HOST"]
    netloc = f"{db['USER']}:{db['PASSWORD']}@" if db.get("PASSWORD") else f"{db['USER']}@"
    if host.startswith("/"):
        return f"postgresql://{netloc}/{db['NAME']}?host={host}" + (f"&port={db['PORT']}" if db.get("PORT") else "")
    return f"postgresql://{netloc}{host}:{db['PORT'] or 5432}/{db['NAME']}"


# The bridge is a process of its own, which embeds the query with the real model: the notes must be
# embedded by it too, or their vectors mean nothing to the query's.
@pytest.mark.real_embedder
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
    """A lone surrogate (which the SDK's parser refuses as a whole message, a 400 parse error naming
    nothing) and NaN in metadata are tool errors naming the argument, and a clean-text message names
    its field once."""
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
    """Each says why, where the SDK's conversion says only "Error creating resource from template
    memory://abc"."""

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
