"""The scale-out stack of `make test-scale`: the Procfile's processes against the external PostgreSQL
(DATABASE_URL) and Redis (KYBERNESIS_REDIS_URL) that .ci/test-scale started.

The web server is started once and the worker twice, exactly as the Procfile says, each in a process
group of its own so a test can SIGKILL one whole qcluster as a machine that dies. The test process
reads the same database directly (no test database: the servers must see what it sees)."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
# The test process signs tasks it enqueues with the test settings' key; the servers must share it.
SHARED_SECRET = "kybernesis-tests-only-not-secret"


def procfile() -> dict[str, list[str]]:
    """The Procfile's process types as argv lists, `python` being this interpreter."""
    types = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, command = line.split(":", 1)
        argv = shlex.split(command)
        types[name.strip()] = [sys.executable if argv[0] == "python" else argv[0], *argv[1:]]
    return types


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Proc:
    name: str
    process: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill_group(self) -> None:
        """SIGKILL the process and every child it forked (a qcluster's sentinel, pusher, monitor, workers)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""


@dataclass
class Stack:
    url: str
    web: Proc
    workers: list[Proc]
    env: dict = field(repr=False)

    def worker_of(self, pid: int) -> Proc | None:
        """The qcluster whose process group holds pid (each was started in a session of its own)."""
        try:
            group = os.getpgid(pid)
        except ProcessLookupError:
            return None
        return next((worker for worker in self.workers if worker.process.pid == group), None)


def _start(name: str, argv: list[str], env: dict, logs: Path) -> Proc:
    log = logs / f"{name}.log"
    process = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True
    )
    return Proc(name, process, log)


def _wait_ready(url: str, web: Proc, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not web.alive():
            raise RuntimeError(f"gunicorn exited:\n{web.tail()}")
        try:
            if requests.get(f"{url}/api/v1/docs", timeout=5).status_code < 500:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"gunicorn not ready after {timeout_s} s:\n{web.tail()}")


@pytest.fixture(scope="session")
def scale_env(tmp_path_factory, fake_notion_server) -> dict:
    for name in ("DATABASE_URL", "KYBERNESIS_REDIS_URL"):
        if not os.environ.get(name):
            pytest.fail(f"{name} is not set: run tests/scale through `make test-scale` (.ci/test-scale)")
    data = tmp_path_factory.mktemp("data")
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kybernesis.settings",
        "KYBERNESIS_DATA_DIR": str(data),
        "KYBERNESIS_SECRET_KEY": SHARED_SECRET,
        "KYBERNESIS_NOTION_API_URL": fake_notion_server.url,
        # Two web processes, and two qcluster processes with one task process each: "two workers".
        "KYBERNESIS_WEB_WORKERS": "2",
        "KYBERNESIS_WEB_THREADS": "4",
        "KYBERNESIS_Q_WORKERS": "1",
        # The tests tell the two clusters apart by their task processes' live pids, so no process is
        # replaced for its size here (KYBERNESIS_Q_MAX_RSS_MB): a replaced one's pid leads nowhere.
        "KYBERNESIS_Q_MAX_RSS_MB": "0",
        # A dead worker's graph task is handed out again after 120 + 15 s, not 5 + 2 minutes (a
        # worker's first task loads spaCy and the model on a busy machine: it needs the headroom).
        "KYBERNESIS_GRAPH_TASK_TIMEOUT": "120",
        "KYBERNESIS_Q_CLAIM_GRACE": "15",
        "KYBERNESIS_Q_TIMEOUT": "600",
    }


@pytest.fixture(scope="session")
def stack(scale_env, tmp_path_factory) -> Stack:
    # The processes' logs: KYBERNESIS_SCALE_LOGS keeps them after the run.
    logs = Path(os.environ.get("KYBERNESIS_SCALE_LOGS") or tmp_path_factory.mktemp("logs"))
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {**scale_env, "HOST": "127.0.0.1", "PORT": str(port)}
    types = procfile()
    # The web processes reach PostgreSQL through PgBouncer in transaction mode when .ci/test-scale
    # started one (docs/scaling.md, "Connection pooling"); task workers always connect directly.
    web_env = {**env, "DATABASE_URL": os.environ.get("KYBERNESIS_SCALE_WEB_DATABASE_URL") or env["DATABASE_URL"]}
    web = _start("web", types["web"], web_env, logs)
    workers = [_start(f"worker{i}", types["worker"], env, logs) for i in (1, 2)]
    stack = Stack(url=f"http://127.0.0.1:{port}", web=web, workers=workers, env=env)
    try:
        _wait_ready(stack.url, web)
        yield stack
    finally:
        for proc in [web, *workers]:
            if proc.alive():
                with_group = proc.process.pid
                try:
                    os.killpg(with_group, signal.SIGTERM)
                    proc.process.wait(timeout=30)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    proc.kill_group()
        for proc in [web, *workers]:
            print(f"--- {proc.name} (last lines)\n{proc.tail(15)}")


@pytest.fixture(scope="session")
def live_db(django_db_blocker):
    """The servers' own database (the test database is never created for tests/scale)."""
    with django_db_blocker.unblock():
        yield


@pytest.fixture(scope="session")
def fake_notion_server():
    from tests.scale.slow_notion import SlowNotion

    server = SlowNotion().start()
    yield server
    server.stop()
