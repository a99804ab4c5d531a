"""Task workers run below the web server's CPU priority, one BLAS thread each, and give memory back."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from django.conf import settings

from core import heap, task_workers


def _spawned_worker(queue) -> None:
    from threadpoolctl import threadpool_info

    before = os.nice(0)
    task_workers.on_worker_spawn(proc_name="Process-test")
    blas = [pool["num_threads"] for pool in threadpool_info() if pool.get("user_api") == "blas"]
    queue.put((before, os.nice(0), Path(f"/proc/{os.getpid()}/comm").read_text().strip(), blas))


def _run_in_child(target):
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=target, args=(queue,))
    child.start()
    result = queue.get(timeout=60)
    child.join(30)
    return result


def test_a_new_task_worker_lowers_its_priority_by_the_setting_and_names_itself(settings):
    settings.KYBERNESIS_WORKER_NICE = 7
    before, after, comm, blas = _run_in_child(_spawned_worker)
    assert after == min(19, before + 7)
    assert comm == "qcluster-worker"
    assert all(threads == 1 for threads in blas)
    assert os.nice(0) == before  # this process is left as it was


def test_nice_zero_leaves_the_worker_at_the_web_servers_priority(settings):
    settings.KYBERNESIS_WORKER_NICE = 0
    before, after, _, _ = _run_in_child(_spawned_worker)
    assert after == before


def test_the_worker_count_defaults_to_one_per_two_cores_and_bounds_the_prefetch():
    cores = len(os.sched_getaffinity(0))
    if not os.environ.get("KYBERNESIS_Q_WORKERS"):
        assert max(1, cores // 2) == settings.KYBERNESIS_Q_WORKERS
    assert settings.Q_CLUSTER["workers"] == settings.KYBERNESIS_Q_WORKERS == settings.Q_CLUSTER["queue_limit"]
    # A worker that peaked past 512 MB is recycled after its task (django-q2 counts in KB).
    assert settings.Q_CLUSTER["max_rss"] == 512 * 1024


def _rss_kb() -> int:
    return next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines() if "VmRSS" in line)


def _large_batch_then_trim(queue) -> None:
    # Many small blocks (below mmap's threshold, so they live in the heap), then one still in use
    # above them: glibc cannot shrink the heap past it, and keeps the freed pages until trimmed.
    blocks = [bytearray(4000) for _ in range(50_000)]
    pinned = bytearray(4000)
    peak = _rss_kb()
    del blocks
    freed = _rss_kb()
    trimmed = heap.release_memory()
    queue.put((peak, freed, _rss_kb(), trimmed))
    del pinned


def test_release_memory_gives_a_freed_batch_back_to_the_system():
    peak, freed, after, trimmed = _run_in_child(_large_batch_then_trim)
    assert freed > peak - 50_000  # freed, but glibc still holds most of it
    assert trimmed
    assert after < freed - 100_000  # more than 100 MB of the ~200 MB batch came back


def _backend_nice_of_a_niced_process(queue) -> None:
    from django.db import connections

    os.nice(5)
    task_workers.follow_with_database()
    connection = connections.create_connection("default")  # a new one: connection_created fires
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    stat = Path(f"/proc/{backend}/stat").read_text()
    queue.put((os.nice(0), int(stat.rsplit(")", 1)[1].split()[16])))
    connection.close()


def test_a_niced_process_puts_its_local_database_backend_at_its_own_priority(db):
    own, backend = _run_in_child(_backend_nice_of_a_niced_process)
    assert backend == own > 0


def test_the_sleep_cycle_child_forks_no_more_extractors_than_there_are_task_workers(settings, monkeypatch):
    import subprocess

    from sleep import child

    seen = {}

    def fake_run(argv, *, env, **kwargs):
        seen.update(env)
        return subprocess.CompletedProcess(argv, 0, stdout='{"status": "done"}\n', stderr="")

    monkeypatch.setattr(child.subprocess, "run", fake_run)
    monkeypatch.setattr(child, "_database_url", lambda: "postgres:///x")
    settings.KYBERNESIS_WORKER_PROCESSES = 0
    settings.KYBERNESIS_Q_WORKERS = 1
    assert child.cycle_in_child(1) == {"status": "done"}
    assert seen["KYBERNESIS_WORKER_PROCESSES"] == "1"
    settings.KYBERNESIS_WORKER_PROCESSES = 3  # set by hand: the child uses it
    monkeypatch.delenv("KYBERNESIS_WORKER_PROCESSES", raising=False)
    seen.clear()
    child.cycle_in_child(1)
    assert "KYBERNESIS_WORKER_PROCESSES" not in seen or seen["KYBERNESIS_WORKER_PROCESSES"] != "1"
