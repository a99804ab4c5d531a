"""A large batch of new memories is extracted by several graph tasks, each small enough for the task timeout."""

from __future__ import annotations

from graph.signals import task_groups


def test_a_batch_is_split_into_tasks_of_at_most_the_chunk_limit(settings):
    settings.KYBERNESIS_GRAPH_TASK_CHUNKS = 10
    assert task_groups([1, 2, 3, 4, 5], [4, 4, 4, 1, 9]) == [[1, 2], [3, 4], [5]]


def test_a_memory_larger_than_the_limit_gets_a_task_of_its_own(settings):
    settings.KYBERNESIS_GRAPH_TASK_CHUNKS = 10
    assert task_groups([1, 2, 3], [2, 40, 3]) == [[1], [2], [3]]


def test_memories_without_chunks_still_get_a_task(settings):
    settings.KYBERNESIS_GRAPH_TASK_CHUNKS = 10
    assert task_groups([1, 2], [0, 0]) == [[1, 2]]


def test_unknown_chunk_counts_make_one_task(settings):
    assert task_groups([1, 2, 3], None) == [[1, 2, 3]]
