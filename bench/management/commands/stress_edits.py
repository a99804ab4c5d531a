"""Concurrent edits stress: rounds of PATCH, PATCH and DELETE of one memory through the JSON API, in
real threads against the real database, while a graph worker extracts the same memory.

Each round creates a memory and starts four threads at a barrier: two PATCH its content (each twice,
with different text, so both re-chunk and queue an extraction), one DELETEs it after a short random
delay, and a worker thread runs the graph task on it in a loop until the delete is done. Graph tasks
queued by the edits run in the request's thread after commit, as a worker would run them. The rule:
no response is a 5xx and no thread raises; a memory deleted first makes the later requests a 404.
The last printed line is JSON: responses by status, errors, and the deadlocks and other conflicts
that PostgreSQL resolved and core.retry ran again.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection
from django.test import Client
from django_q.conf import Conf

from core import retry
from core.auth import api_token_create
from graph import tasks
from memories.services import memory_create

TOPICS = [
    "Alice Smith met Bob Jones in Paris to plan the Apollo launch with NASA.",
    "Carol Diaz of Acme Corp visited Berlin and signed the Orion contract with Siemens.",
    "Dave Brown wrote to Eve Stone about the Gemini budget review at Google in London.",
    "Frank Moore and Grace Lee of Initech discussed the Zephyr migration in Tokyo.",
]


def run_rounds(*, rounds: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    user = get_user_model().objects.create_user(
        username=f"stress-{time.time_ns()}", email=f"stress-{time.time_ns()}@example.org", password="x" * 12
    )
    _, key = api_token_create(user=user)
    host = next((h for h in settings.ALLOWED_HOSTS if h != "*" and not h.startswith(".")), "localhost")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}", "HTTP_HOST": host}
    statuses: Counter = Counter()
    lock = threading.Lock()

    def count(key: str) -> None:
        with lock:
            statuses[key] += 1

    errors: list[str] = []
    retried_before, gave_up_before = retry.stats["retried"], retry.stats["gave_up"]
    sync_before = Conf.SYNC
    Conf.SYNC = True  # the edits' graph tasks run after commit in their own thread, as a worker would
    started = time.perf_counter()
    try:
        for number in range(rounds):
            memory = memory_create(owner=user, title=f"round {number}", content=" ".join(rng.sample(TOPICS, 3)))
            texts = [" ".join(rng.sample(TOPICS, 2)) + f" Edit {number}.{i}." for i in range(4)]
            if not _round(memory.pk, texts=texts, delay=rng.uniform(0.0, 0.4), auth=auth, count=count, errors=errors):
                errors.append(f"round {number}: a thread did not finish within 300 s")
                break
    finally:
        Conf.SYNC = sync_before
    server_errors = sum(n for status, n in statuses.items() if status.split()[-1].startswith("5"))
    return {
        "rounds": rounds,
        "statuses": dict(sorted(statuses.items())),
        "server_errors": server_errors,
        "errors": errors,
        "deadlocks_unresolved": sum("deadlock" in e.lower() for e in errors),
        "conflicts_retried": retry.stats["retried"] - retried_before,
        "conflicts_given_up": retry.stats["gave_up"] - gave_up_before,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _round(memory_id: int, *, texts: list[str], delay: float, auth: dict, count, errors: list[str]) -> bool:
    """One round: two editors, a deleter and a worker on one memory, started together. False when a
    thread is still running after 300 s (a hang)."""
    url = f"/api/v1/memories/{memory_id}"
    barrier = threading.Barrier(4)
    deleted = threading.Event()

    def guarded(fn):
        def run():
            try:
                barrier.wait(timeout=60)
                fn()
            except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
                errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                connection.close()

        return run

    def patcher(first: int):
        client = Client()
        for text in texts[first : first + 2]:
            response = client.patch(url, json.dumps({"content": text}), content_type="application/json", **auth)
            count(f"PATCH {response.status_code}")

    def deleter():
        time.sleep(delay)
        response = Client().delete(url, **auth)
        count(f"DELETE {response.status_code}")
        deleted.set()

    def worker():
        while not deleted.is_set():
            tasks.extract_memories([memory_id])
            count("worker runs")
        tasks.extract_memories([memory_id])  # once more after the delete: it must skip the memory

    threads = [threading.Thread(target=guarded(fn)) for fn in (lambda: patcher(0), lambda: patcher(2), deleter, worker)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return not any(thread.is_alive() for thread in threads)


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=50)
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **options):
        result = run_rounds(rounds=options["rounds"], seed=options["seed"])
        self.stdout.write(json.dumps(result))
