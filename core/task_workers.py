"""The django-q2 task worker processes: background work that yields the CPU to interactive work,
and gives back the memory a large task used.

Connected in core.apps to django-q2's signals:

- post_spawn (in each new worker process): lower the worker's CPU priority by
  KYBERNESIS_WORKER_NICE (default 10), so a search or an upload answered by the web workers is
  scheduled before graph extraction, tagging or a sleep cycle; the children a task starts (the
  sleep cycle's process, a forked extraction pool, OCR) inherit it. BLAS runs on one thread in the
  worker, so one worker's task occupies one core, and KYBERNESIS_Q_WORKERS bounds how many run at once.
  The process is named `qcluster-worker` (its comm, as `ps` and `top` show it).
- The PostgreSQL backend serving a task worker's connection (or that of a process it started, which
  inherits its nice value), when it runs on this machine under a user this process may renice (the
  embedded database), gets the same lower priority: a task's writes then queue behind a search's
  reads too, not only its Python.
- post_execute_in_worker (after each task): return the freed heap to the system (malloc_trim), so a
  worker that just extracted a large batch does not keep its peak.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
from pathlib import Path

from django.conf import settings

from core.heap import c_library, release_memory

logger = logging.getLogger(__name__)

PROCESS_NAME = b"qcluster-worker"  # at most 15 bytes: the kernel's comm
PR_SET_NAME = 15


def lower_priority(nice: int) -> int:
    """Raise this process's nice value by `nice` (0 leaves it); returns the nice value now."""
    if nice > 0:
        with contextlib.suppress(OSError):
            return os.nice(nice)
    return os.nice(0)


def on_worker_spawn(sender=None, proc_name: str = "", **kwargs) -> None:
    """post_spawn: runs in each task worker process as it starts."""
    nice = lower_priority(max(0, settings.KYBERNESIS_WORKER_NICE))
    with contextlib.suppress(OSError, AttributeError):
        c_library().prctl(PR_SET_NAME, ctypes.c_char_p(PROCESS_NAME), 0, 0, 0)
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    threadpool_limits(limits=1, user_api="blas")
    follow_with_database(nice)
    logger.info("task worker %s (pid %s) running at nice %s", proc_name, os.getpid(), nice)


def follow_with_database(nice: int | None = None) -> None:
    """When this process runs below normal priority (a task worker, or a process one started, such
    as the sleep cycle's), give each new database connection's server process the same priority."""
    if (os.nice(0) if nice is None else nice) > 0:
        from django.db.backends.signals import connection_created

        connection_created.connect(_lower_backend_priority, dispatch_uid="core.task_workers.backend")


def _lower_backend_priority(sender, connection, **kwargs) -> None:
    """connection_created, in a task worker: renice the server process of the new connection to
    this worker's nice value, if it is a local PostgreSQL process (checked by its name, so a remote
    server's pid never touches a local process of that number)."""
    if connection.vendor != "postgresql":
        return
    try:
        backend = connection.connection.info.backend_pid
        if Path(f"/proc/{backend}/comm").read_text().strip() != "postgres":
            return
        os.setpriority(os.PRIO_PROCESS, backend, os.nice(0))
    except Exception:  # noqa: BLE001 - a priority is an optimisation, never a reason to fail a connection
        return  # another machine's server, another user's process, or no /proc: left as it is


def on_task_done(sender=None, **kwargs) -> None:
    """post_execute_in_worker: after every task, in the worker that ran it."""
    release_memory()
