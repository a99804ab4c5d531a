"""Batches spread over forked workers come back complete and in order, or run in-process."""

from __future__ import annotations

import os

from core import workers


def _squares_and_pid(batch: list[int]) -> list[tuple[int, int]]:
    return [(n * n, os.getpid()) for n in batch]


def test_batches_run_in_forked_workers_and_come_back_in_order():
    batches = [list(range(start, start + 7)) for start in range(0, 70, 7)]
    results = list(workers.map_batches(_squares_and_pid, batches, workers=2, min_items=1))
    assert [value for part in results for value, _ in part] == [n * n for n in range(70)]
    assert os.getpid() not in {pid for part in results for _, pid in part}


def test_small_work_or_one_worker_runs_in_this_process():
    for kwargs in ({"workers": 1, "min_items": 1}, {"workers": 2, "min_items": 1000}):
        results = list(workers.map_batches(_squares_and_pid, [[1, 2], [3]], **kwargs))
        assert results == [[(1, os.getpid()), (4, os.getpid())], [(9, os.getpid())]]


def test_prepare_runs_once_in_this_process_before_the_workers_fork():
    calls = []

    def prepare():
        calls.append(os.getpid())

    for _ in range(2):
        list(workers.map_batches(_squares_and_pid, [[1], [2]], workers=2, min_items=1, prepare=prepare))
    assert calls == [os.getpid()]
