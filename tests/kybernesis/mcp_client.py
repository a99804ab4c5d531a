"""An MCP test client as one token, over real HTTP, with one session kept open like a real agent's."""

from __future__ import annotations

import json

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from core.auth import api_token_create

TOOLS = {
    "memory_add",
    "memory_search",
    "memory_get",
    "memory_versions",
    "memory_list",
    "memory_update",
    "memory_delete",
    "memory_tag",
    "memory_pin",
    "trash_list",
    "entity_search",
    "entity_neighbors",
    "sleep_run",
    "import_start",
    "import_status",
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


def agent_for(live_server, user):
    """A fixture body: an Agent for a new token of `user`, closed after the test."""
    agent = Agent(live_server.url + "/mcp", api_token_create(user=user)[1])
    yield agent
    agent.close()
