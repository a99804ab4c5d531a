"""core.queue.ReliableRedis against a real redis-server: a dequeued task stays claimed until it is
acknowledged, and a claim that outlives its task's timeout plus the grace is handed out again."""

from __future__ import annotations

import time
import uuid

import pytest
from django_q.signing import SignedPackage

from core.queue import ReliableRedis

pytestmark = pytest.mark.scale


@pytest.fixture
def queue_key():
    key = f"test-{uuid.uuid4().hex}"
    yield key
    ReliableRedis(list_key=key).delete_queue()


@pytest.fixture
def broker(queue_key):
    return ReliableRedis(list_key=queue_key, holder="host:1", limit=0)


def package(name: str, timeout: int | None = None) -> str:
    task = {"id": uuid.uuid4().hex, "name": name, "func": "math.floor", "args": (1.5,), "kwargs": {}}
    if timeout is not None:
        task["timeout"] = timeout
    return SignedPackage.dumps(task)


def names(claimed) -> list[str]:
    return [SignedPackage.loads(payload)["name"] for _, payload in claimed]


def test_a_dequeued_task_is_claimed_not_gone_until_acknowledged(broker):
    broker.enqueue(package("first"))
    broker.enqueue(package("second"))

    first = broker.dequeue()
    assert names(first) == ["first"]
    assert broker.queue_size() == 1 and broker.lock_size() == 1

    broker.acknowledge(first[0][0])
    assert broker.lock_size() == 0
    assert names(broker.dequeue()) == ["second"]


def test_an_empty_queue_dequeues_nothing(broker):
    assert broker.dequeue() is None
    assert broker.queue_size() == 0 and broker.lock_size() == 0


def test_a_claim_that_outlives_its_timeout_and_grace_is_handed_out_again_first(broker, settings):
    settings.KYBERNESIS_Q_CLAIM_GRACE = 1
    broker.enqueue(package("dies with its worker", timeout=1))
    broker.enqueue(package("waiting"))
    claimed = broker.dequeue()
    assert names(claimed) == ["dies with its worker"]

    # Within its claim nobody else gets it.
    assert names(broker.dequeue()) == ["waiting"]
    assert broker.dequeue() is None

    time.sleep(3.2)  # the claim (1 s timeout + 1 s grace, whole seconds of Redis time) lapses
    again = broker.dequeue()
    assert names(again) == ["dies with its worker"]
    assert again[0][0] != claimed[0][0]  # a new claim: the dead worker's acknowledgement is void
    assert broker.lock_size() == 2  # "waiting" (never acknowledged here) and the new claim


def test_a_late_acknowledgement_of_a_lapsed_claim_removes_nothing_else(broker, settings):
    settings.KYBERNESIS_Q_CLAIM_GRACE = 1
    broker.enqueue(package("slow", timeout=1))
    old = broker.dequeue()
    time.sleep(3.2)
    new = broker.dequeue()
    broker.acknowledge(old[0][0])
    assert broker.lock_size() == 1
    broker.acknowledge(new[0][0])
    assert broker.lock_size() == 0


def test_a_cluster_claims_no_more_tasks_than_it_has_workers_and_the_other_gets_the_rest(queue_key):
    busy = ReliableRedis(list_key=queue_key, holder="host-a:10", limit=1)
    idle = ReliableRedis(list_key=queue_key, holder="host-b:20", limit=1)
    for name in ("long cycle", "short extraction"):
        busy.enqueue(package(name))

    first = busy.dequeue()
    assert names(first) == ["long cycle"]
    assert busy.dequeue() is None  # its one worker is busy: the next task stays for someone else
    assert names(idle.dequeue()) == ["short extraction"]
    assert busy.held() == {"host-a:10": 1, "host-b:20": 1}

    busy.enqueue(package("next"))
    busy.acknowledge(first[0][0])
    assert names(busy.dequeue()) == ["next"]


def test_a_failed_task_frees_its_clusters_slot_but_stays_claimed_for_another_attempt(queue_key, settings):
    settings.KYBERNESIS_Q_CLAIM_GRACE = 1
    worker = ReliableRedis(list_key=queue_key, holder="host-a:10", limit=1)
    task = package("flaky", timeout=1)
    worker.enqueue(task)
    worker.enqueue(package("other"))
    worker.dequeue()

    worker.task_failed(SignedPackage.loads(task)["id"])  # what the monitor's post_execute does
    assert worker.held() == {}
    assert worker.lock_size() == 1  # the failed task is still claimed
    assert names(worker.dequeue()) == ["other"]

    time.sleep(3.2)
    worker.acknowledge("no such claim")
    other_worker = ReliableRedis(list_key=queue_key, holder="host-b:20", limit=1)
    assert names(other_worker.dequeue()) == ["flaky"]  # the next attempt, when the claim lapsed


def test_a_dead_clusters_slots_are_freed_when_its_claims_lapse(queue_key, settings):
    settings.KYBERNESIS_Q_CLAIM_GRACE = 1
    dead = ReliableRedis(list_key=queue_key, holder="host-a:10", limit=1)
    dead.enqueue(package("held by the dead", timeout=1))
    dead.dequeue()
    time.sleep(3.2)
    survivor = ReliableRedis(list_key=queue_key, holder="host-b:20", limit=1)
    assert names(survivor.dequeue()) == ["held by the dead"]
    assert survivor.held() == {"host-b:20": 1}
