"""The watcher as `make run` runs it, `manage.py consume` in a process of its own, killed with SIGKILL
again and again while it files a folder of real documents: no file is lost, none is stored twice."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memories.models import ConsumedFile, Memory
from tests.factories import UserFactory
from tests.memories.consume_helpers import drop_files, files_under

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    host = db["HOST"]
    netloc = f"{db['USER']}:{db['PASSWORD']}@" if db.get("PASSWORD") else f"{db['USER']}@"
    if host.startswith("/"):
        return f"postgresql://{netloc}/{db['NAME']}?host={host}" + (f"&port={db['PORT']}" if db.get("PORT") else "")
    return f"postgresql://{netloc}{host}:{db['PORT'] or 5432}/{db['NAME']}"


def _filed(inbox: Path) -> list[str]:
    return [name for name in files_under(inbox / "done") if not name.endswith(".reason.txt")]


def test_kill_9_of_the_watcher_mid_way_loses_none_and_doubles_none(tmp_path):
    user = UserFactory()
    inbox = tmp_path / "consume"
    inbox.mkdir()
    written = drop_files(inbox, 120, pdfs=4)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kybernesis.settings",
        "DATABASE_URL": _database_url(),
        "KYBERNESIS_DATA_DIR": str(tmp_path / "data"),
        "KYBERNESIS_ORIGINALS_DIR": str(tmp_path / "originals"),
        "KYBERNESIS_CONSUME_DIR": str(inbox),
        "KYBERNESIS_CONSUME_USER": user.username,
        "KYBERNESIS_CONSUME_STABLE_SECONDS": "0",
        "KYBERNESIS_LOG_LEVEL": "WARNING",
    }
    log = tmp_path / "consume.log"
    kills, interrupted, rng = 0, 0, random.Random(7)
    with log.open("ab") as out:
        for _ in range(4):
            before = len(_filed(inbox))
            process = subprocess.Popen(
                [sys.executable, str(ROOT / "manage.py"), "consume"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            deadline = time.monotonic() + 180
            while len(_filed(inbox)) < before + 8 and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.05)
            time.sleep(rng.uniform(0, 0.4))  # somewhere inside the next file: reading, embedding, moving
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            kills += 1
            interrupted += bool(files_under(inbox / "processing"))  # killed inside a file, not between two
            assert len(_filed(inbox)) > before, log.read_text()[-3000:]
        # The restart after the last kill: `consume --once` finishes what processing/ holds, then the rest.
        finished = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "consume", "--once"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=out,
            timeout=600,
            check=False,
        )
    assert finished.returncode == 0, log.read_text()[-3000:]
    assert kills == 4 and interrupted >= 1
    assert sorted(_filed(inbox)) == sorted(written)  # every file in done/, once
    assert all((inbox / "done" / name).read_bytes() == data for name, data in written.items())
    assert len([n for n in files_under(inbox / "done") if n.endswith(".reason.txt")]) == len(written)
    assert files_under(inbox / "processing") == [] and files_under(inbox / "failed") == []
    assert [p.name for p in inbox.iterdir() if p.is_file()] == []
    rows = ConsumedFile.objects.filter(owner=user)
    assert rows.count() == len(written) and not rows.filter(filed=False).exists()
    assert {row.name for row in rows} == set(written)
    # 120 distinct texts: 120 memories, each stored once, none reported as a duplicate of itself.
    assert Memory.objects.filter(owner=user).count() == len(written)
    assert set(rows.values_list("status", flat=True)) == {"created"}
    assert len(set(Memory.objects.values_list("content_hash", flat=True))) == len(written)


def test_sigint_stops_the_watcher_cleanly_and_it_lets_go_of_the_folder(tmp_path):
    from memories.models import ConsumeWatcher

    user = UserFactory()
    inbox = tmp_path / "consume"
    inbox.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kybernesis.settings",
        "DATABASE_URL": _database_url(),
        "KYBERNESIS_DATA_DIR": str(tmp_path / "data"),
        "KYBERNESIS_ORIGINALS_DIR": str(tmp_path / "originals"),
        "KYBERNESIS_CONSUME_DIR": str(inbox),
        "KYBERNESIS_CONSUME_USER": user.email,
        "KYBERNESIS_CONSUME_STABLE_SECONDS": "0.5",
    }
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "consume"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        (inbox / "note.txt").write_text("Dropped while the watcher runs, before it is stopped with Ctrl-C.")
        deadline = time.monotonic() + 180
        while not (inbox / "done" / "note.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (inbox / "done" / "note.txt").exists()
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, output.decode()
    assert b"Stopped watching." in output
    assert ConsumeWatcher.objects.get(folder=str(inbox)).stopped is True
    assert Memory.objects.filter(owner=user).count() == 1
