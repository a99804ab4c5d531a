"""Retrying a transaction that PostgreSQL aborted to resolve a conflict (deadlock, serialization failure).

Writers take their locks in one order (a memory's row first, then what hangs off it, then the owner's
graph lock), so deadlocks are rare; the few that remain, for example a link refresh meeting a delete
of a neighbouring memory, are resolved by PostgreSQL aborting one side. That side runs its
transaction again after a short randomised backoff instead of failing the request or the task.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from functools import wraps
from typing import TypeVar

from django.db import DatabaseError, IntegrityError, connection

logger = logging.getLogger(__name__)

T = TypeVar("T")

# deadlock_detected, serialization_failure, lock_not_available
CONFLICT_SQLSTATES = frozenset({"40P01", "40001", "55P03"})
# foreign_key_violation: a row this transaction pointed at was deleted by another one meanwhile.
VANISHED_SQLSTATES = frozenset({"23503"})

DEFAULT_ATTEMPTS = 6
BASE_DELAY_S = 0.05
MAX_DELAY_S = 2.0

# Counts since process start, for the stress command and tests: how many conflicts were retried.
stats = {"retried": 0, "gave_up": 0}


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a database error, looking through Django's wrapper to the psycopg cause."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 5:
        code = getattr(current, "sqlstate", None) or getattr(current, "pgcode", None)
        if code:
            return code
        current = current.__cause__ or current.__context__
        seen += 1
    return None


def is_conflict(exc: BaseException, *, vanished: bool = False) -> bool:
    if not isinstance(exc, DatabaseError):
        return False
    code = sqlstate(exc)
    return code in CONFLICT_SQLSTATES or (vanished and isinstance(exc, IntegrityError) and code in VANISHED_SQLSTATES)


def backoff_delay(attempt: int) -> float:
    """Full jitter: a random wait up to an exponentially growing cap, so two retried sides part ways."""
    return random.uniform(0, min(MAX_DELAY_S, BASE_DELAY_S * (2**attempt)))


def run_with_retry(
    fn: Callable[[], T], *, attempts: int = DEFAULT_ATTEMPTS, vanished: bool = False, label: str = ""
) -> T:
    """Call fn (which opens and commits its own transaction) and run it again when the database aborted
    it for a conflict. With `vanished`, a foreign-key violation (a row deleted meanwhile) is retried
    too: fn is expected to re-read and skip what is gone. Inside an outer transaction nothing can be
    retried (the outer transaction is already aborted), so fn runs once."""
    if connection.in_atomic_block:
        return fn()
    for attempt in range(attempts):
        try:
            return fn()
        except DatabaseError as exc:
            if not is_conflict(exc, vanished=vanished) or attempt == attempts - 1:
                if is_conflict(exc, vanished=vanished):
                    stats["gave_up"] += 1
                raise
            stats["retried"] += 1
            delay = backoff_delay(attempt)
            logger.info(
                "%s: %s (SQLSTATE %s), retrying in %.2fs (attempt %d of %d)",
                label or fn.__name__,
                type(exc).__name__,
                sqlstate(exc),
                delay,
                attempt + 2,
                attempts,
            )
            time.sleep(delay)
    raise AssertionError("unreachable")


def retrying(*, attempts: int = DEFAULT_ATTEMPTS, vanished: bool = False):
    """Decorator form of run_with_retry for a function that is one transaction."""

    def decorate(fn):
        @wraps(fn)
        def wrapper(*args, **kwargs):
            return run_with_retry(
                lambda: fn(*args, **kwargs), attempts=attempts, vanished=vanished, label=fn.__qualname__
            )

        return wrapper

    return decorate
