"""gunicorn settings for `make run`: fixed gthread workers and threads, a bounded database pool each.

Every value comes from the environment (docs/deployment.md, "Serving on one machine"):

- KYBERNESIS_WEB_WORKERS processes (0: one per core, at least 2, at most 8). The master loads
  Django, the embedding model and the tagger once, before it forks the workers
  (KYBERNESIS_WEB_PRELOAD, default on): the workers share those pages instead of each loading its
  own copy, and a worker that replaces a dead one is ready at once. The master opens no database
  connection, so no worker inherits one. With KYBERNESIS_WEB_PRELOAD=false each worker loads them
  itself, at start; either way no request pays for it.
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


preload_app = os.environ.get("KYBERNESIS_WEB_PRELOAD", "true").strip().lower() not in ("0", "false", "no", "off")
# Bodies at least this large (a batch of documents, an upload) are followed by a malloc_trim.
TRIM_AFTER_BYTES = 64 * 1024


def _warm_up() -> float:
    """Load the embedding model (and warm its first call) and the auto-tagger; the seconds it took."""
    import time

    from memories import auto_tags, embedding

    started = time.monotonic()
    embedding.embed_query("warm up", cache=False)
    auto_tags.warm_up()
    return time.monotonic() - started


def when_ready(server) -> None:
    """In the master, after the preloaded app and before the first fork: load what every worker
    needs, so the workers share it; then close whatever database connection loading opened."""
    if not preload_app:
        return
    import gc

    from django.db import connections

    from core.heap import release_memory
    from memories import embedding

    seconds = _warm_up()
    connections.close_all()
    # What the master loaded stays shared with the workers only while nobody writes to it; the
    # cyclic garbage collector would write to every object's header, so it leaves these alone.
    gc.collect()
    gc.freeze()
    release_memory()
    server.log.info("embedding model (%s) and tagger loaded before forking in %.1f s", embedding.backend_id(), seconds)


def worker_exit(server, worker) -> None:
    """In a worker that is exiting (its requests done, its connections closed): with preloading,
    leave without the interpreter's clean-up. ONNX Runtime's session was made in the master, and
    its destructors, run in a forked copy, wait forever or abort; there is nothing left to save."""
    if not preload_app or os.getpid() != worker.pid:
        return  # not preloaded, or the master noting a worker that is already gone
    import logging
    import sys

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if worker.booted else 3)  # 3: gunicorn's WORKER_BOOT_ERROR, which stops the master


def post_worker_init(worker) -> None:
    """Without preloading, load the model and the tagger before the worker takes requests, so the
    first search and the first upload wait for neither (with it, this finds them loaded)."""
    from memories import embedding

    worker.log.info(
        "worker %s: embedding model (%s) and tagger ready in %.1f s", worker.pid, embedding.backend_id(), _warm_up()
    )


def post_request(worker, req, environ, resp) -> None:
    """After a large request body, give the heap it freed back to the system: glibc keeps freed
    memory for reuse, so a worker that took one 500-document batch would hold that peak for good."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return
    if length >= TRIM_AFTER_BYTES:
        from core.heap import release_memory

        release_memory()


def worker_abort(worker) -> None:
    worker.log.warning(
        "worker %s aborted (timeout); its requests in flight are answered with errors "
        "by the client's connection closing, their transactions roll back",
        worker.pid,
    )


control_socket_disable = True  # one per user by default; several servers on one machine would share it
