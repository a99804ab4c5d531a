"""A large batch is extracted by several graph tasks, each small enough for the task timeout."""

from __future__ import annotations

from types import SimpleNamespace

from memories.services import _graph_task_groups


def _memories(n: int) -> list:
    return [SimpleNamespace(pk=i + 1) for i in range(n)]


def test_a_batch_is_split_into_tasks_of_at_most_the_chunk_limit(settings):
    settings.KYBERNESIS_GRAPH_TASK_CHUNKS = 10
    assert _graph_task_groups(_memories(5), [4, 4, 4, 1, 9]) == [[1, 2], [3, 4], [5]]


def test_a_memory_larger_than_the_limit_gets_a_task_of_its_own(settings):
    settings.KYBERNESIS_GRAPH_TASK_CHUNKS = 10
    assert _graph_task_groups(_memories(3), [2, 40, 3]) == [[1], [2], [3]]


def test_memories_without_chunks_still_get_a_task(settings):
    settings.KYBERNESIS_GRAPH_TASK_CHUNKS = 10
    assert _graph_task_groups(_memories(2), [0, 0]) == [[1, 2]]
