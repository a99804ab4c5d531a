"""A web worker killed in the middle of a large batch: nothing of the batch is stored, the master
replaces the worker at once (it forks from the preloaded master), and the killed worker's memory
comes back. Run against the real server, started as `make run` starts it, with one web worker."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import threading
import time

import pytest
import requests

from bench.footprint import SEED_SCRIPT, snapshot
from bench.load import Client, Server
from bench.synthetic import document

pytestmark = pytest.mark.slow


def _web_workers(root: int) -> list[dict]:
    return [p for p in snapshot(root)["processes"] if p["role"] == "web worker"]


def _count(client: Client) -> int:
    status, content = client.request("GET", "/api/v1/memories?limit=1")
    assert status == 200, content[:300]
    return json.loads(content)["count"]


@pytest.fixture
def server():
    server = Server.fresh("kybernesis-test-faults-", KYBERNESIS_WEB_WORKERS="1", KYBERNESIS_WEB_THREADS="2")
    try:
        server.manage("migrate", "--noinput")
        server.token = json.loads(server.manage("shell", "-c", SEED_SCRIPT).strip().splitlines()[-1])
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)


def test_a_worker_killed_mid_batch_stores_nothing_and_its_memory_comes_back(server):
    client = Client(server.base_url, server.token, keep_alive=False)
    root = server.process.pid
    (before,) = _web_workers(root)
    rng = random.Random(3)
    items = [{"title": f"Batch item {i}", "content": document(rng, target_chars=6000)} for i in range(300)]
    answers: list = []

    def post() -> None:
        try:
            answers.append(client.request("POST", "/api/v1/memories/batch", {"items": items})[0])
        except (OSError, requests.RequestException) as exc:
            answers.append(type(exc).__name__)

    sender = threading.Thread(target=post)
    sender.start()
    # Kill it while it embeds: once the batch has made it grow.
    deadline = time.monotonic() + 60
    grown = before["pss_mb"] + 15
    while time.monotonic() < deadline and _web_workers(root)[0]["pss_mb"] < grown and sender.is_alive():
        time.sleep(0.05)
    assert sender.is_alive(), f"the batch finished before the kill: {answers}"
    peak = _web_workers(root)[0]
    os.kill(before["pid"], signal.SIGKILL)
    sender.join(60)
    assert answers and answers[0] != 201

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = _web_workers(root)
        if workers and workers[0]["pid"] != before["pid"]:
            break
        time.sleep(0.2)
    (after,) = _web_workers(root)
    assert after["pid"] != before["pid"]
    assert _count(client) == 0  # the batch is one transaction: none of it was stored
    # The replacement starts from the master's pages, not from the killed worker's peak.
    assert after["pss_mb"] < peak["pss_mb"]
    assert after["pss_mb"] < before["pss_mb"] + 30
    # And it serves: the same batch, sent again, is stored whole.
    status, content = client.request("POST", "/api/v1/memories/batch", {"items": items[:50]})
    assert status == 201, content[:300]
    assert _count(client) == 50
