"""The embedded PostgreSQL: data survives a restart, and processes share one server."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kybernesis.db import database_settings

ROOT = Path(__file__).resolve().parents[2]

CLIENT = textwrap.dedent("""
    import sys
    from pathlib import Path
    import psycopg
    from kybernesis.db import embedded_database_url
    url = embedded_database_url(Path(sys.argv[1]))
    with psycopg.connect(url, autocommit=True) as conn:
        pid = conn.execute("SELECT pg_postmaster_start_time(), pg_backend_pid()").fetchone()
        if sys.argv[2] == "write":
            conn.execute("CREATE TABLE IF NOT EXISTS kept (v text)")
            conn.execute("INSERT INTO kept VALUES ('survives restarts')")
        elif sys.argv[2] == "read":
            print(conn.execute("SELECT v FROM kept").fetchone()[0])
        has_vector = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        print("vector" if has_vector else "no-vector")
        print(pid[0].isoformat(), flush=True)
    if sys.argv[2] == "hold":
        sys.stdin.readline()
""")


def run_client(data_dir: Path, mode: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, str(data_dir), mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"the {mode} client failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return done.stdout.strip().splitlines()


@pytest.fixture
def data_dir(tmp_path):
    yield tmp_path / "kyb-data"


def test_data_survives_a_restart_of_the_embedded_server(data_dir):
    *_, first_start = run_client(data_dir, "write")
    # The last process using it has exited, so the server stopped.
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()
    value, has_vector, second_start = run_client(data_dir, "read")
    assert value == "survives restarts"
    assert has_vector == "vector"
    assert second_start != first_start


def test_two_processes_share_one_server(data_dir):
    holder = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(data_dir), "hold"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        holder.stdout.readline()
        holder_start = holder.stdout.readline().strip()
        *_, joiner_start = run_client(data_dir, "write")
        assert joiner_start == holder_start, "the second process joined the running server"
        # The joiner's exit must not stop the server the holder still uses.
        assert (data_dir / "pgdata" / "postmaster.pid").exists()
    finally:
        holder.communicate("\n", timeout=60)
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgres://kyb:s3cr%40t@db.internal:6543/memory",
            {"NAME": "memory", "USER": "kyb", "PASSWORD": "s3cr@t", "HOST": "db.internal", "PORT": "6543"},
        ),
        ("postgresql://postgres:@/kybernesis?host=/tmp/sock", {"NAME": "kybernesis", "HOST": "/tmp/sock", "PORT": ""}),
        ("postgres://u@localhost/db?sslmode=require", {"HOST": "localhost", "OPTIONS": {"sslmode": "require"}}),
    ],
)
def test_database_urls_become_django_settings(url, expected):
    settings = database_settings(url)
    assert {key: settings[key] for key in expected} == expected


def test_a_database_url_that_is_not_postgres_is_refused():
    with pytest.raises(ValueError, match="postgres://"):
        database_settings("sqlite:///db.sqlite3")
