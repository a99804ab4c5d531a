"""Benchmark: MCP memory_search against the API's POST /search, side by side over real HTTP; last line is JSON.

A throwaway user gets N memories (through memories.services, so they are embedded like any other)
and an API token; a threaded WSGI server (the one runserver and live_server use) serves the project on a
free port. Each query is sent both ways, alternating which goes first, as the same raw HTTP POST a
client makes: the API call to /api/v1/search and a stateless `tools/call` of memory_search to /mcp.
Both pay the same query embedding and search, so the difference is what the MCP door adds.
"""

from __future__ import annotations

import json
import random
import statistics
import threading
import time

import requests
from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIHandler
from django.core.management.base import BaseCommand
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

from bench.synthetic import document, sentence
from core.auth import api_token_create
from memories.services import MemoryInput, memory_create_many

BENCH_USER = "bench-mcp"


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Command(BaseCommand):
    help = "Latency of MCP memory_search vs the API search, measured side by side (ms)."

    def add_arguments(self, parser):
        parser.add_argument("--memories", type=int, default=300)
        parser.add_argument("--queries", type=int, default=100)
        parser.add_argument("--seed", type=int, default=19)

    def handle(self, *args, memories: int, queries: int, seed: int, **options):
        rng = random.Random(seed)
        User = get_user_model()
        User.objects.filter(username=BENCH_USER).delete()
        owner = User.objects.create(username=BENCH_USER, email="bench-mcp@localhost")
        try:
            for start in range(0, memories, 200):
                memory_create_many(
                    owner=owner,
                    items=[
                        MemoryInput(title="", content=document(rng, target_chars=1200))
                        for _ in range(min(200, memories - start))
                    ],
                )
            _, token = api_token_create(user=owner, name="bench_mcp")
            result = self._measure(
                token, [" ".join(sentence(rng).split()[: rng.randint(2, 6)]) for _ in range(queries)]
            )
        finally:
            User.objects.filter(pk=owner.pk).delete()
        result = {"bench": "mcp", "memories": memories, "queries": queries, **result}
        self.stdout.write(json.dumps(result))

    def _measure(self, token: str, texts: list[str]) -> dict:
        httpd = ThreadedWSGIServer(("127.0.0.1", 0), _QuietHandler, allow_reuse_address=True)
        httpd.set_app(WSGIHandler())
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        auth = {"Authorization": f"Bearer {token}"}
        mcp_headers = {**auth, "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        http = requests.Session()

        def api(query: str) -> float:
            started = time.perf_counter()
            response = http.post(f"{base}/api/v1/search", json={"query": query, "limit": 10}, headers=auth, timeout=60)
            elapsed = time.perf_counter() - started
            assert response.status_code == 200, response.text
            return elapsed * 1000

        def mcp(query: str) -> float:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": query, "limit": 10}},
            }
            started = time.perf_counter()
            response = http.post(f"{base}/mcp", json=body, headers=mcp_headers, timeout=60)
            elapsed = time.perf_counter() - started
            assert response.status_code == 200 and not response.json()["result"].get("isError"), response.text
            return elapsed * 1000

        try:
            for query in texts[:5]:  # warm-up: model, connections, caches
                api(query), mcp(query)
            api_ms, mcp_ms = [], []
            for i, query in enumerate(texts):
                if i % 2:
                    api_ms.append(api(query)), mcp_ms.append(mcp(query))
                else:
                    mcp_ms.append(mcp(query)), api_ms.append(api(query))
        finally:
            httpd.shutdown()
            httpd.server_close()
        diffs = [m - a for m, a in zip(mcp_ms, api_ms, strict=True)]
        return {
            "api_p50_ms": round(statistics.median(api_ms), 2),
            "mcp_p50_ms": round(statistics.median(mcp_ms), 2),
            "api_p95_ms": round(_percentile(api_ms, 0.95), 2),
            "mcp_p95_ms": round(_percentile(mcp_ms, 0.95), 2),
            "mcp_minus_api_p50_ms": round(statistics.median(diffs), 2),
            "mcp_over_api_p50_ratio": round(statistics.median(mcp_ms) / statistics.median(api_ms), 3),
        }
