"""Two qcluster workers on one Redis queue, behind gunicorn with two web workers, driven over HTTP:
every task runs exactly once, the cross-process locks hold, and a worker killed mid-task loses
nothing. Executions are counted from the task-run log (core.TaskRun) each worker writes."""

from __future__ import annotations

import io
import json
import os
import threading
import time
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import requests
from django.db.models import Count
from django.utils import timezone

from tests.fakes.notion import block

pytestmark = [pytest.mark.scale, pytest.mark.usefixtures("live_db")]

UPLOADS = int(os.environ.get("KYBERNESIS_SCALE_UPLOADS", "200"))
EXTRACT = "graph.tasks.extract_memories"
TOPICS = ["Berlin", "Lisbon", "Kyoto", "Nairobi", "Toronto", "Oslo", "Lima", "Hanoi"]
PEOPLE = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Claude Shannon"]


def wait_for(check, *, timeout_s: float, what: str, stack=None, every_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every_s)
    tails = "" if stack is None else "\n".join(f"--- {p.name}\n{p.tail()}" for p in [stack.web, *stack.workers])
    pytest.fail(f"timed out after {timeout_s} s waiting for {what() if callable(what) else what}\n{tails}")


def note(i: int) -> dict:
    person, place = PEOPLE[i % len(PEOPLE)], TOPICS[i % len(TOPICS)]
    return {
        "title": f"Field note {i}",
        "content": f"Note {i}: {person} met the team in {place} to review plan {i}. "
        f"They agreed that {person} will send the {place} budget by Friday.",
    }


@pytest.fixture(scope="session")
def owner(live_db):
    from django.contrib.auth import get_user_model
    from django_q.conf import Conf

    from core.auth import api_token_create

    # The test process enqueues to the same Redis queue the workers read, never runs a task itself.
    Conf.SYNC = False
    user = get_user_model().objects.create_user(username=f"scale{time.time_ns()}", password="not-used-here")
    _, key = api_token_create(user=user, name="scale test")
    return user, {"Authorization": f"Bearer {key}"}


def runs_since(started, func: str):
    from core.models import TaskRun

    return TaskRun.objects.filter(func=func, started_at__gte=started)


def extracted_ids(runs) -> Counter:
    """How many finished runs extracted each memory id."""
    counts: Counter = Counter()
    for args in runs.filter(finished_at__isnull=False).values_list("args", flat=True):
        counts.update(args[0])
    return counts


def test_200_uploads_over_http_are_each_extracted_exactly_once_by_the_two_workers(stack, owner):
    from graph.models import MemoryExtraction

    user, headers = owner
    started = timezone.now()

    def upload(i):
        response = requests.post(f"{stack.url}/api/v1/memories", json=note(i), headers=headers, timeout=120)
        assert response.status_code == 201, response.text
        return response.json()["id"]

    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = list(pool.map(upload, range(UPLOADS)))
    assert len(set(ids)) == UPLOADS

    wait_for(
        lambda: MemoryExtraction.objects.filter(memory__owner=user).count() == UPLOADS,
        timeout_s=1200,
        what="every upload's graph extraction",
        stack=stack,
    )
    runs = runs_since(started, EXTRACT)
    # The hourly cycle (scheduled when the workers start) may extract some first; their tasks still run.
    wait_for(
        lambda: set(extracted_ids(runs)) >= set(ids),
        timeout_s=600,
        what=lambda: f"a finished extraction task of each upload: {sorted(set(ids) - set(extracted_ids(runs)))}",
        stack=stack,
    )
    # A run records its end just after the extraction commits: let the last ones finish.
    wait_for(
        lambda: not runs.filter(finished_at__isnull=True).exists(),
        timeout_s=120,
        what=lambda: f"the last runs to end: {list(runs.filter(finished_at__isnull=True).values_list('args', 'pid'))}",
        stack=stack,
    )
    counts = extracted_ids(runs)
    assert set(counts) == set(ids)
    duplicates = {memory_id: n for memory_id, n in counts.items() if n != 1}
    assert duplicates == {}
    assert not runs.filter(success=False).exists()
    # Both qcluster processes took tasks from the one queue.
    groups = {
        stack.worker_of(pid).name for pid in runs.values_list("pid", flat=True).distinct() if stack.worker_of(pid)
    }
    assert groups == {"worker1", "worker2"}


def hourly_pair(stack, attempt: int) -> bool:
    """Fire the hourly request twice at once and check that one cycle ran, once. True when the two
    requests ran on the two workers (which one claims a task is up to the workers' polling)."""
    from django_q.models import Task
    from django_q.tasks import async_task

    from sleep.models import SleepRun, SleepStepRun

    wait_idle()
    started = timezone.now()
    # What the hourly schedule does, fired twice at the same moment, as by two schedulers.
    task_ids = [async_task("sleep.tasks.scheduled_cycle", task_name=f"scale hourly {attempt}.{i}") for i in (1, 2)]

    def finished():
        results = list(Task.objects.filter(id__in=task_ids).values_list("result", flat=True))
        runs = SleepRun.objects.filter(requested_at__gte=started)
        return len(results) == 2 and runs.exists() and not runs.filter(status__in=SleepRun.ACTIVE).exists()

    wait_for(finished, timeout_s=900, what="the hourly cycle", stack=stack)
    results = sorted(Task.objects.filter(id__in=task_ids).values_list("result", flat=True))
    assert [r.split()[-1] for r in results] == ["active", "queued"], results
    run = SleepRun.objects.get(requested_at__gte=started)
    assert run.trigger == SleepRun.Trigger.SCHEDULED and run.status == SleepRun.Status.COMPLETED
    assert run.resumed_count == 0
    assert SleepStepRun.objects.filter(run=run, status=SleepStepRun.Status.COMPLETED).count() == run.steps.count()
    cycle_runs = runs_since(started, "sleep.tasks.run_cycle")
    # The run's row is completed inside the task; the task ends a moment later.
    wait_for(lambda: cycle_runs.filter(finished_at__isnull=False).exists(), timeout_s=120, what="the cycle task's end")
    assert [(args, ok) for args, ok in cycle_runs.values_list("args", "success")] == [([run.pk], True)]
    requests_run = runs_since(started, "sleep.tasks.scheduled_cycle").filter(name__startswith="scale hourly")
    return len({stack.worker_of(pid).name for pid in requests_run.values_list("pid", flat=True)}) == 2


def test_an_hourly_cycle_requested_on_both_workers_at_once_runs_once(stack, owner):
    # Each pair must run one cycle once; at least one pair must have met on the two workers (the
    # request lock then held across processes), which the first pair almost always does.
    split = [hourly_pair(stack, attempt) for attempt in range(1, 4)]
    assert any(split), split


def wait_idle() -> None:
    """Until the queue is empty and no worker holds a task."""
    from django_q.brokers import get_broker

    broker = get_broker()
    wait_for(lambda: broker.queue_size() == 0 and broker.lock_size() == 0, timeout_s=600, what="idle workers")


@pytest.fixture(scope="session")
def notion_connector(owner, fake_notion_server):
    from allauth.socialaccount.models import SocialAccount, SocialApp, SocialToken
    from django.contrib.sites.models import Site

    from connectors import services

    user, _ = owner
    app = SocialApp.objects.create(
        provider="notion",
        name="Notion",
        client_id=fake_notion_server.client_id,
        secret=fake_notion_server.client_secret,
    )
    app.sites.add(Site.objects.get_current())
    social = SocialAccount.objects.create(
        user=user, provider="notion", uid=f"user-{user.pk}_workspace-acme", extra_data={"workspace_name": "Acme"}
    )
    SocialToken.objects.create(account=social, token=fake_notion_server.issue_token("acme"), app=app)
    return services.connector_account_connect(user=user, social_account=social)


def test_a_sync_requested_twice_at_once_over_http_runs_once(stack, owner, notion_connector, fake_notion_server):
    from connectors.models import ConnectorAccount, ConnectorItem

    _, headers = owner
    wait_idle()
    pages = [
        fake_notion_server.add_page(f"Standup {i}", [block("paragraph", f"Minutes of standup {i} in Oslo.")])
        for i in range(12)
    ]
    started = timezone.now()
    url = f"{stack.url}/api/v1/connectors/{notion_connector.pk}/sync"
    barrier = threading.Barrier(2)

    def request_sync(_):
        barrier.wait()
        return requests.post(url, headers=headers, timeout=60).status_code

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(request_sync, range(2))) == [202, 202]

    sync_runs = runs_since(started, "connectors.tasks.sync_account")
    wait_for(
        lambda: sync_runs.filter(finished_at__isnull=False).count() == 2,
        timeout_s=600,
        what="both sync tasks",
        stack=stack,
    )
    account = ConnectorAccount.objects.get(pk=notion_connector.pk)
    assert account.status == ConnectorAccount.Status.SYNCED, account.last_error
    # Both tasks ran, on the two workers at once; only one of them synced: each page was read once.
    assert len({stack.worker_of(pid).name for pid in sync_runs.values_list("pid", flat=True)}) == 2
    for page in pages:
        assert len(fake_notion_server.calls(f"/v1/blocks/{page['id']}/children")) == 1
    assert ConnectorItem.objects.filter(account=account).count() == len(pages)
    assert account.synced_count == len(pages)


def test_a_worker_killed_mid_task_has_its_task_finished_by_the_other_with_no_duplicate_rows(stack, owner):
    from core.models import TaskRun
    from graph.models import EntityMention, MemoryExtraction
    from memories.models import Memory

    user, headers = owner
    started = timezone.now()
    # Long enough that spaCy takes seconds over it: the kill lands while the task runs.
    paragraphs = [
        f"{PEOPLE[i % 5]} flew from {TOPICS[i % 8]} to {TOPICS[(i + 3) % 8]} on day {i} and met "
        f"{PEOPLE[(i + 2) % 5]} at the {TOPICS[(i + 5) % 8]} office to discuss the Atlas project budget."
        for i in range(600)
    ]
    response = requests.post(
        f"{stack.url}/api/v1/memories",
        json={"title": "Travel log", "content": "\n\n".join(paragraphs)},
        headers=headers,
        timeout=300,
    )
    assert response.status_code == 201, response.text
    big_id = response.json()["id"]
    # More tasks behind it: the dying cluster may hold some in its own queue, and none may be lost.
    small_ids = [
        requests.post(f"{stack.url}/api/v1/memories", json=note(1000 + i), headers=headers, timeout=120).json()["id"]
        for i in range(6)
    ]

    runs = runs_since(started, EXTRACT)

    def running_big():
        return next((r for r in runs.filter(finished_at__isnull=True) if big_id in r.args[0]), None)

    victim_run = wait_for(running_big, timeout_s=300, what="the long extraction to start", stack=stack, every_s=0.1)
    victim = stack.worker_of(victim_run.pid)
    assert victim is not None
    victim.kill_group()
    survivor = next(worker for worker in stack.workers if worker is not victim)
    assert survivor.alive()

    def done_elsewhere():
        return [
            r
            for r in runs.filter(finished_at__isnull=False, success=True)
            if big_id in r.args[0] and stack.worker_of(r.pid) is survivor
        ]

    # Handed out again once its claim lapses: the task's timeout (120 s) plus the grace (15 s).
    redone = wait_for(done_elsewhere, timeout_s=400, what="the other worker to redo the task", stack=stack)
    assert len(redone) == 1
    assert redone[0].task_id == victim_run.task_id
    assert TaskRun.objects.get(pk=victim_run.pk).finished_at is None  # the killed run never ended

    wait_for(
        lambda: MemoryExtraction.objects.filter(memory_id__in=[big_id, *small_ids]).count() == 7,
        timeout_s=400,
        what="every extraction after the kill",
        stack=stack,
    )
    counts = extracted_ids(runs)
    assert {memory_id: counts[memory_id] for memory_id in [big_id, *small_ids]} == dict.fromkeys(
        [big_id, *small_ids], 1
    )
    # No duplicate rows: one memory, each mention once, however often extraction started.
    assert Memory.objects.filter(owner=user, title="Travel log").count() == 1
    repeated = (
        EntityMention.objects.filter(memory_id=big_id)
        .values("chunk_id", "start", "entity_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not repeated.exists()
    assert EntityMention.objects.filter(memory_id=big_id).exists()


def test_no_task_is_lost_the_queue_drains_and_every_started_task_ended(stack):
    from django_q.brokers import get_broker

    from core.models import TaskRun

    broker = get_broker()
    assert type(broker).__name__ == "ReliableRedis"
    wait_for(
        lambda: broker.queue_size() == 0 and broker.lock_size() == 0,
        timeout_s=400,
        what="the queue to drain and every claim to be acknowledged",
        stack=stack,
    )
    recent = TaskRun.objects.filter(started_at__gte=timezone.now() - timedelta(hours=2))
    unfinished = set(recent.filter(finished_at__isnull=True).values_list("task_id", flat=True))
    finished = set(recent.filter(finished_at__isnull=False).values_list("task_id", flat=True))
    # Only the killed run is unfinished, and its task ended on the other worker.
    assert len(unfinished) <= 1
    assert unfinished <= finished


def test_the_web_processes_reached_postgresql_through_pgbouncer_in_transaction_mode(stack, owner):
    """Everything above went through PgBouncer (transaction pooling) for the web: one more request
    over HTTP, then PgBouncer's admin console shows that database's pool in transaction mode with
    server connections it has opened (SHOW POOLS is live; SHOW STATS only updates once a minute)."""
    import psycopg
    from psycopg import ClientCursor

    from memories.models import Memory

    url = os.environ.get("KYBERNESIS_SCALE_WEB_DATABASE_URL")
    assert url, "KYBERNESIS_SCALE_WEB_DATABASE_URL is not set: run tests/scale through `make test-scale`"
    assert stack.web.process.poll() is None
    _, headers = owner
    created = requests.post(f"{stack.url}/api/v1/memories", json=note(2000), headers=headers, timeout=120)
    assert created.status_code == 201, created.text

    def search(_):
        return requests.get(f"{stack.url}/api/v1/search", params={"q": "budget"}, headers=headers, timeout=60)

    # Requests at once, so that PgBouncer holds several server connections.
    with ThreadPoolExecutor(max_workers=6) as pool:
        assert {r.status_code for r in pool.map(search, range(12))} == {200}
    # The export streams after its view returned, in autocommit: each of its reads is a transaction of
    # its own, which PgBouncer may give to any server connection (round robin here, .ci/test-scale).
    export = requests.get(f"{stack.url}/api/v1/export", params={"vectors": "false"}, headers=headers, timeout=300)
    assert export.status_code == 200, export.text[:2000]
    with zipfile.ZipFile(io.BytesIO(export.content)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["counts"]["memories"] == Memory.objects.filter(owner=owner[0]).count() > 0

    admin = url.rsplit("/", 1)[0] + "/pgbouncer"
    # The admin console speaks only the simple query protocol: a client-side-binding cursor uses it.
    with psycopg.connect(admin, autocommit=True, cursor_factory=ClientCursor) as conn:
        cursor = conn.execute("SHOW POOLS")
        columns = [c.name for c in cursor.description]
        pools = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    (pool,) = [p for p in pools if p["database"] == "kybernesis" and p["user"] == "kybernesis"]
    assert pool["pool_mode"] == "transaction"
    assert pool["sv_active"] + pool["sv_idle"] + pool["sv_used"] + pool["sv_tested"] + pool["sv_login"] > 0


class FromAddress(requests.adapters.HTTPAdapter):
    """Connections from another loopback address (127.0.0.2): a client the server tells apart."""

    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def test_rate_limits_count_through_pgbouncer_and_refuse_wrong_tokens_with_429(stack, owner):
    """The API's rate limits (core.throttling, at their production defaults here) are counted by the
    web processes, so through PgBouncer's transaction pool: one autocommit INSERT … ON CONFLICT per
    request on the UNLOGGED core_ratecounter, shared by both gunicorn workers. Every request is
    counted exactly once, and an address that sends too many wrong tokens is refused with 429."""
    from django.db import connection

    from core.models import RateCounter

    user, headers = owner
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpersistence FROM pg_class WHERE relname = 'core_ratecounter'")
        assert cursor.fetchone() == ("u",)  # unlogged on the external server too

    # N requests within one fixed slot (60 s) add exactly N to the account's count: none lost or
    # counted twice by the two web processes. A slot that turns over meanwhile is measured again.
    key, n = f"account:{user.pk}", 20
    for _ in range(3):
        before = RateCounter.objects.filter(key=key).values_list("slot", "count").first()
        for _ in range(n):
            response = requests.get(f"{stack.url}/api/v1/memories", params={"limit": 1}, headers=headers, timeout=60)
            assert response.status_code == 200, response.text
        after = RateCounter.objects.filter(key=key).values_list("slot", "count").first()
        if before is not None and after is not None and before[0] == after[0]:
            assert after[1] - before[1] == n
            break
    else:
        pytest.fail(f"no {n} requests fitted in one slot: {before} then {after}")
    assert RateCounter.objects.filter(key="address:127.0.0.1").exists()

    # Wrong tokens from 127.0.0.2 (so the other tests' address stays unaffected): 401 while the
    # address is within KYBERNESIS_API_AUTH_FAILURE_RATE (60/m), then 429 with Retry-After, for a
    # right token too; the same right token from 127.0.0.1 still gets its answer.
    elsewhere = requests.Session()
    elsewhere.mount("http://", FromAddress("127.0.0.2"))
    statuses = []
    while len(statuses) < 200 and 429 not in statuses:
        response = elsewhere.get(
            f"{stack.url}/api/v1/memories", headers={"Authorization": "Bearer kyb_wrong"}, timeout=60
        )
        statuses.append(response.status_code)
    assert statuses[-1] == 429 and set(statuses[:-1]) == {401} and len(statuses) > 60, statuses
    assert int(response.headers["Retry-After"]) >= 1
    refused = elsewhere.get(f"{stack.url}/api/v1/memories", headers=headers, timeout=60)
    assert refused.status_code == 429, refused.text
    failures = RateCounter.objects.get(key="auth-failure:127.0.0.2")
    assert failures.count + failures.previous >= 60  # the window may span two slots
    assert requests.get(f"{stack.url}/api/v1/memories", headers=headers, timeout=60).status_code == 200
