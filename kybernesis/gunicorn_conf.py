"""gunicorn settings for `make run`: fixed gthread workers and threads, a bounded database pool each.

Every value comes from the environment (docs/deployment.md, "Serving on one machine"):

- KYBERNESIS_WEB_WORKERS processes (0: one per core, at least 2, at most 8). Each loads the
  embedding model once, at start, so no request pays for it.
- KYBERNESIS_WEB_THREADS threads per process (default 4): requests a process serves at once. A
  request holds a thread from its first byte to its last, so W x T bounds the concurrency.
- Each process gets a psycopg connection pool of KYBERNESIS_DB_POOL_SIZE connections (default: its
  thread count), so the whole server holds at most W x T database connections however many
  clients connect. A request that finds no connection within KYBERNESIS_DB_POOL_TIMEOUT, or that
  PostgreSQL refuses, is answered 503 with Retry-After (kybernesis.unavailable), never 500.
- Connections beyond what the threads serve wait in the worker (KYBERNESIS_WEB_CONNECTIONS per
  process, default 64) and then in the kernel's listen backlog: a burst queues, it does not fail.
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


def default_workers() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, min(cores, 8))


workers = _int("KYBERNESIS_WEB_WORKERS", 0) or default_workers()
threads = max(1, _int("KYBERNESIS_WEB_THREADS", 4))
worker_class = "gthread"
worker_connections = max(threads, _int("KYBERNESIS_WEB_CONNECTIONS", 64))
bind = [f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"]
backlog = 2048
# A request may embed a 500-item batch or a large upload; a worker stuck longer than this is replaced.
timeout = _int("KYBERNESIS_WEB_TIMEOUT", 300)
graceful_timeout = 20
keepalive = 5
# Uploads are streamed to disk by Django past 2.5 MB; gunicorn only bounds the request line and headers.
limit_request_line = 8190
accesslog = os.environ.get("KYBERNESIS_WEB_ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("KYBERNESIS_LOG_LEVEL", "info").lower()
proc_name = "kybernesis-web"

# The workers inherit these (gunicorn reads this file before it forks them).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kybernesis.settings")
os.environ.setdefault("KYBERNESIS_DB_POOL_SIZE", str(threads))
# Workers share the cores: each model call uses its share of them instead of all of them.
cores = os.cpu_count() or 1
os.environ.setdefault("KYBERNESIS_EMBED_THREADS", str(max(1, cores // workers)))


def post_worker_init(worker) -> None:
    """Load the embedding model (and warm its first call) and the auto-tagger before the worker
    takes requests, so the first search and the first upload wait for neither."""
    import time

    from memories import auto_tags, embedding

    started = time.monotonic()
    embedding.embed_query("warm up")
    auto_tags.warm_up()
    worker.log.info(
        "worker %s: embedding model (%s) and tagger ready in %.1f s",
        worker.pid,
        embedding.backend_id(),
        time.monotonic() - started,
    )


def worker_abort(worker) -> None:
    worker.log.warning(
        "worker %s aborted (timeout); its requests in flight are answered with errors "
        "by the client's connection closing, their transactions roll back",
        worker.pid,
    )


control_socket_disable = True  # one per user by default; several servers on one machine would share it
