"""Faults and races of a restore. kill -9 of a process in the middle of one leaves the memory as it was
(old state), never a mix, and the restore run again completes (new state): a subprocess test, so it is
slow. Two restores at once queue on the memory's row lock and both become versions.

The restore is held half-way by a lock this test takes on one of the memory's chunks: the subprocess has
by then locked the memory, rewritten its row (the new version is written by the trigger) and removed
its postings, and waits to replace its chunks. It is killed there with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from memories import services
from memories.models import ChunkTerm, Memory, MemoryChunk, MemoryVersion
from memories.services.memory import chunks_for
from tests.factories import UserFactory, make_memory
from tests.kybernesis.test_squashed_migrations import database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
OLD = "\n\n".join(f"Paragraph {i}: the lighthouse keeper logged the storm at midnight." * 6 for i in range(6))
NEW = "\n\n".join(f"Paragraph {i}: quarterly revenue grew in the northern region." * 6 for i in range(6))

RESTORE = textwrap.dedent(
    """
    import django
    django.setup()
    from memories import embedding
    from tests.fakes.embedder import FAKE_MODEL
    embedding.get_model = lambda: FAKE_MODEL
    embedding._load_backend = lambda: "torch"
    from memories.models import Memory
    from memories.services.restore import memory_version_restore
    memory = Memory.objects.get(pk={memory_id})
    memory_version_restore(memory=memory, number=1)
    print("restored", flush=True)
    """
)


def snapshot(memory_id: int) -> dict:
    memory = Memory.objects.get(pk=memory_id)
    return {
        "content": memory.content,
        "version": memory.version,
        "versions": list(
            MemoryVersion.objects.filter(pgh_obj_id=memory_id).order_by("version").values_list("version", flat=True)
        ),
        "chunks": list(
            MemoryChunk.objects.filter(memory_id=memory_id).order_by("position").values_list("text", flat=True)
        ),
        "postings": ChunkTerm.objects.filter(chunk__memory_id=memory_id).count(),
    }


def run_restore(memory_id: int) -> subprocess.Popen:
    params = connection.get_connection_params()
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith(("PATH", "HOME", "KYBERNESIS_"))},
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "kybernesis.settings_test",
        "DATABASE_URL": database_url(params, connection.settings_dict["NAME"]),
    }
    return subprocess.Popen(
        [sys.executable, "-c", RESTORE.format(memory_id=memory_id)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_blocked(process: subprocess.Popen, conn, timeout: float = 120.0) -> str:
    """Until another backend waits on a lock (the restore, at the chunk this test holds); its query.
    `conn` is outside any transaction: pg_stat_activity is read once per transaction."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the restore ended before it reached the lock: {process.stderr.read()[-3000:]}")
        row = conn.execute(
            "SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        ).fetchone()
        if row:
            return row[0]
        time.sleep(0.2)
    others = conn.execute(
        "SELECT state, wait_event_type, wait_event, left(query, 200) FROM pg_stat_activity "
        "WHERE pid <> pg_backend_pid() AND datname = current_database()"
    ).fetchall()
    raise AssertionError(f"the restore (process {process.pid}) never reached the chunk lock: {others}")


def test_kill_9_during_a_restore_leaves_the_old_state_and_a_rerun_the_new():
    user = UserFactory()
    memory = make_memory(user, OLD, title="Storm log")
    services.memory_update(memory=memory, content=NEW)
    before = snapshot(memory.pk)
    assert before["chunks"] == [c.text for c in chunks_for(NEW)] and before["version"] == 2

    params = connection.get_connection_params()
    plain = {k: v for k, v in params.items() if k in ("host", "port", "user", "password", "dbname")}
    with psycopg.connect(**plain) as holder:
        holder.execute(
            "SELECT id FROM memories_memorychunk WHERE memory_id = %s ORDER BY position LIMIT 1 FOR UPDATE", [memory.pk]
        )
        process = run_restore(memory.pk)
        try:
            with psycopg.connect(**plain, autocommit=True) as watcher:
                waiting = wait_until_blocked(process, watcher)
            assert "memories_memorychunk" in waiting, waiting
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
        holder.rollback()
    assert process.returncode == -signal.SIGKILL
    assert snapshot(memory.pk) == before  # the old state, whole: row, versions, chunks, postings

    process = run_restore(memory.pk)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-3000:]
    after = snapshot(memory.pk)
    assert after["content"] == OLD and after["version"] == 3 and after["versions"] == [1, 2, 3]
    assert after["chunks"] == [c.text for c in chunks_for(OLD)] and after["postings"] > 0


def test_two_restores_at_once_queue_on_the_row_lock_and_both_are_versions():
    import threading

    from django.db import connections

    from memories.services.restore import memory_version_restore

    user = UserFactory()
    memory = make_memory(user, OLD, title="Storm log")
    services.memory_update(memory=memory, content=NEW)
    services.memory_update(memory=memory, content=NEW + "\n\nA third text.")
    barrier, errors = threading.Barrier(2), []

    def restore(number: int) -> None:
        try:
            barrier.wait()
            memory_version_restore(memory=Memory.objects.get(pk=memory.pk), number=number)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=restore, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    after = snapshot(memory.pk)
    assert after["version"] == 5 and after["versions"] == [1, 2, 3, 4, 5]
    restored_from = sorted(
        v.pgh_context["restoredFrom"] for v in MemoryVersion.objects.filter(pgh_obj_id=memory.pk, version__gt=3)
    )
    assert restored_from == [1, 2]
    assert after["content"] in (OLD, NEW) and after["chunks"] == [c.text for c in chunks_for(after["content"])]
