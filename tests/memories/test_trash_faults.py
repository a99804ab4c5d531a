"""kill -9 of a process purging or restoring the trash leaves each memory whole in its old state or its
new one: never a memory without chunks, chunks in the wrong layer, or an original row without its file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from memories import original_files, services
from memories.models import TRASH_LAYER, ChunkTerm, Memory, MemoryChunk, Original, PurgedMemory
from memories.search import lexical
from tests.factories import UserFactory
from tests.memories.originals_helpers import upload

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
MEMORIES = 240


def _database_url() -> str:
    params = connection.get_connection_params()
    host = params.get("host") or ""
    user = quote(params.get("user") or "")
    port = params.get("port") or ""
    return f"postgresql://{user}@/{params['dbname']}?host={quote(host)}" + (f"&port={port}" if port else "")


def _run_and_kill(code: str, env: dict, *, after_s: float) -> int:
    """Run `code` in a fresh Django process and SIGKILL it `after_s` seconds after it says it started."""
    process = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert process.stdout.readline().strip() == b"started", process.stdout.read().decode()[-2000:]
    time.sleep(after_s)
    os.kill(process.pid, signal.SIGKILL)
    return process.wait(timeout=60)


def _env(store_dir) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return {
        **env,
        "DJANGO_SETTINGS_MODULE": "kybernesis.settings",
        "DATABASE_URL": _database_url(),
        "KYBERNESIS_ORIGINALS_DIR": str(store_dir),
        "KYBERNESIS_KEEP_ORIGINALS": "true",
        "KYBERNESIS_SECRET_KEY": "test-only",
    }


def _whole(owner) -> None:
    """Every memory is entirely in one state; the lexical index is what indexing from scratch gives."""
    for memory in Memory.all_objects.filter(owner=owner):
        layers = set(MemoryChunk.objects.filter(memory=memory).values_list("tier", flat=True))
        assert layers, f"memory {memory.pk} has no chunks"
        if memory.trashed_at is None:
            assert layers == {memory.tier}
        else:
            assert layers == {TRASH_LAYER}
            assert not ChunkTerm.objects.filter(chunk__memory=memory).exists()
        original = Original.objects.get(memory=memory)
        assert original_files.path_for(owner.pk, original.sha256).exists()
    gone = set(PurgedMemory.objects.filter(owner=owner).values_list("memory_id", flat=True))
    assert not gone & set(Memory.all_objects.filter(owner=owner).values_list("pk", flat=True))
    postings = sorted(ChunkTerm.objects.filter(owner=owner).values_list("chunk_id", "lexeme", "tf"))
    lexical.reindex_owner(owner.pk)
    assert postings == sorted(ChunkTerm.objects.filter(owner=owner).values_list("chunk_id", "lexeme", "tf"))


def _fill(owner) -> list[int]:
    files = [
        upload(f"note-{i}.txt", f"Field note {i}: the heron count at pond {i} was {i * 7}.".encode())
        for i in range(MEMORIES)
    ]
    ids = []
    for start in range(0, MEMORIES, 40):
        ids += [r.memory.pk for r in services.upload_files(owner=owner, files=files[start : start + 40])]
    return ids


@pytest.mark.parametrize("after_s", [0.05, 0.4])
def test_kill_9_during_empty_trash_leaves_each_memory_old_or_new(store_dir, after_s):
    owner = UserFactory()
    ids = _fill(owner)
    services.memories_trash(owner_id=owner.pk, memory_ids=ids)
    code = (
        "import django; django.setup()\n"
        "from memories.services import trash_empty\n"
        "from memories.services import trash as t\n"
        "t.PURGE_BATCH = 20\n"
        "print('started', flush=True)\n"
        f"while trash_empty(owner={owner.pk}): pass\n"
    )
    _run_and_kill(code, _env(store_dir), after_s=after_s)
    _whole(owner)
    # What is left can still be purged, and its files go with it.
    services.trash_empty(owner=owner)
    assert not Memory.all_objects.filter(owner=owner).exists()


@pytest.mark.parametrize("after_s", [0.05, 0.4])
def test_kill_9_during_restores_leaves_each_memory_old_or_new(store_dir, after_s):
    owner = UserFactory()
    ids = _fill(owner)
    services.memories_trash(owner_id=owner.pk, memory_ids=ids)
    code = (
        "import django; django.setup()\n"
        "from memories.services import memories_restore_from_trash\n"
        "print('started', flush=True)\n"
        f"ids = {ids!r}\n"
        "for i in range(0, len(ids), 10):\n"
        f"    memories_restore_from_trash(owner_id={owner.pk}, memory_ids=ids[i:i + 10])\n"
    )
    _run_and_kill(code, _env(store_dir), after_s=after_s)
    _whole(owner)
