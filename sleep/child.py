"""Run a sleep cycle in a child process of its own, where spaCy and YAKE may use the forked worker pool.

A django-q2 worker is a daemonic process, and a daemonic process may not fork workers: the hourly
cycle would run every CPU-bound batch in that one process. The child may fork as many as the task
workers are sized to (KYBERNESIS_Q_WORKERS, one per two cores) unless KYBERNESIS_WORKER_PROCESSES
says otherwise: on two cores it works alone, leaving a core to the web server and its memory free.
The task instead starts `manage.py sleep_execute RUN_ID` (an ordinary process, free to fork) and
waits for it. The child dies with the worker (PR_SET_PDEATHSIG), so a worker killed by its timeout
or by hand leaves no orphan behind; the run's heartbeat then goes stale and the next request resumes
it from its checkpoint.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, urlencode

from django.conf import settings

logger = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # Not Linux (no prctl): the child may outlive a killed worker, and finishes the run itself.
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _database_url() -> str:
    """This process's database as a URL, so the child uses the very same one (an external server,
    the embedded one this process already holds, or a test database)."""
    from django.db import connection

    db = connection.settings_dict
    credentials = quote(db["USER"] or "", safe="") + (f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else "")
    port = f":{db['PORT']}" if db["PORT"] else ""
    query = {"host": db["HOST"]} if db["HOST"] else {}
    query.update({k: v for k, v in db["OPTIONS"].items() if isinstance(v, str)})
    return f"postgres://{credentials}@{port}/{quote(db['NAME'], safe='')}" + (f"?{urlencode(query)}" if query else "")


def cycle_in_child(run_id: int, *, timeout: float | None = None) -> dict:
    """Execute the queued run `run_id` in a child process and return its JSON report."""
    manage = Path(settings.BASE_DIR) / "manage.py"
    env = {**os.environ, "DATABASE_URL": _database_url()}
    if settings.KYBERNESIS_WORKER_PROCESSES <= 0:
        # Background work gets the cores the task workers are sized to (one per two cores), not
        # every core: each forked extractor holds its own growing copy of the batch's work.
        env["KYBERNESIS_WORKER_PROCESSES"] = str(max(1, settings.KYBERNESIS_Q_WORKERS))
    done = subprocess.run(
        [sys.executable, str(manage), "sleep_execute", str(run_id)],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=_die_with_parent,
        check=False,
        timeout=timeout or settings.KYBERNESIS_Q_LONG_TIMEOUT,
    )
    if done.stderr.strip():
        logger.info("sleep run %s child: %s", run_id, done.stderr.strip()[-4000:])
    if done.returncode != 0:
        raise RuntimeError(
            f"the sleep cycle's child process exited with {done.returncode}: {done.stderr.strip()[-2000:]}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])
