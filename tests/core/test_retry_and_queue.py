"""Conflict retries (core.retry) and task claims that last as long as each task may run (core.queue)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, OperationalError, connection, transaction
from django_q.signing import SignedPackage

from core import retry
from core.queue import CLAIM_GRACE_S, claim_seconds


class _PgError(Exception):
    def __init__(self, sqlstate):
        self.sqlstate = sqlstate


def _wrapped(kind, sqlstate):
    error = kind("conflict")
    error.__cause__ = _PgError(sqlstate)
    return error


def test_a_deadlock_is_run_again_and_other_errors_are_not(monkeypatch):
    monkeypatch.setattr(retry, "backoff_delay", lambda attempt: 0)
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise _wrapped(OperationalError, "40P01")
        return "done"

    assert retry.run_with_retry(flaky) == "done" and len(calls) == 3

    def broken():
        raise _wrapped(OperationalError, "42601")  # a syntax error is never retried

    with pytest.raises(OperationalError):
        retry.run_with_retry(broken)


def test_a_vanished_row_is_retried_only_when_asked(monkeypatch):
    monkeypatch.setattr(retry, "backoff_delay", lambda attempt: 0)
    calls = []

    def vanished():
        calls.append(1)
        if len(calls) == 1:
            raise _wrapped(IntegrityError, "23503")
        return len(calls)

    assert retry.run_with_retry(vanished, vanished=True) == 2
    calls.clear()
    with pytest.raises(IntegrityError):
        retry.run_with_retry(vanished)


def test_retries_give_up_after_the_last_attempt(monkeypatch):
    monkeypatch.setattr(retry, "backoff_delay", lambda attempt: 0)

    def always():
        raise _wrapped(OperationalError, "40001")

    before = retry.stats["gave_up"]
    with pytest.raises(OperationalError):
        retry.run_with_retry(always, attempts=3)
    assert retry.stats["gave_up"] == before + 1


@pytest.mark.django_db
def test_inside_an_outer_transaction_nothing_is_retried(monkeypatch):
    calls = []

    def once():
        calls.append(1)
        raise _wrapped(OperationalError, "40P01")

    with transaction.atomic(), pytest.raises(OperationalError):
        assert connection.in_atomic_block
        retry.run_with_retry(once)
    assert len(calls) == 1


def test_backoff_grows_and_is_capped():
    assert all(0 <= retry.backoff_delay(0) <= retry.BASE_DELAY_S for _ in range(20))
    assert all(retry.backoff_delay(30) <= retry.MAX_DELAY_S for _ in range(20))


def test_a_task_is_claimed_for_its_own_timeout_plus_grace(settings):
    from django_q.conf import Conf

    short = SignedPackage.dumps({"id": "a", "func": "graph.tasks.extract_memories", "timeout": 300})
    default = SignedPackage.dumps({"id": "b", "func": "sleep.tasks.run_cycle"})
    assert claim_seconds(short) == 300 + CLAIM_GRACE_S
    assert claim_seconds(default) == Conf.RETRY
    assert claim_seconds("not a signed package") == Conf.RETRY
    # A claim never outlasts the cluster's retry, however long a task's timeout.
    huge = SignedPackage.dumps({"id": "c", "func": "x", "timeout": 10**6})
    assert claim_seconds(huge) == Conf.RETRY


def test_graph_tasks_are_split_and_carry_their_timeout(settings, monkeypatch):
    from graph import signals

    settings.KYBERNESIS_GRAPH_TASK_CHUNKS = 4
    settings.KYBERNESIS_GRAPH_TASK_TIMEOUT = 123
    sent = []
    monkeypatch.setattr(signals, "async_task", lambda func, ids, **kwargs: sent.append((func, ids, kwargs)))
    signals.extract_changed_memories(sender=None, memory_ids=[1, 2, 3, 4, 5], chunk_counts=[2, 2, 3, 1, 5])
    assert [ids for _, ids, _ in sent] == [[1, 2], [3, 4], [5]]
    assert all(kwargs["timeout"] == 123 for _, _, kwargs in sent)
