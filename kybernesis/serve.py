"""`make run`'s process manager: the web server, the django-q2 worker and, when KYBERNESIS_CONSUME_DIR
is set, the watcher of the watched folder; each restarted if it dies.

- The web server is gunicorn with fixed gthread workers (kybernesis/gunicorn_conf.py); gunicorn's
  master replaces a worker that dies. `--dev` (`make dev`) runs Django's runserver instead, for
  development only.
- A child that exits while the server is up (a crash, a kill -9, out of memory) is started again
  after a backoff: 1 s, doubling up to 30 s, back to 1 s once a child has stayed up a minute.
- With no DATABASE_URL, this process starts (or joins) the embedded PostgreSQL first and holds it
  until the end, so a child's restart never stops the database under the other.
- Ctrl-C or SIGTERM stops every child (SIGINT, then SIGTERM, then SIGKILL), then the database.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRACE_S = 20
BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0
STABLE_AFTER_S = 60.0


def _default_sigint() -> None:
    # A shell that starts `make run &` ignores SIGINT for its children; Python only turns SIGINT
    # into a clean KeyboardInterrupt when it was not ignored at start-up.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _log(message: str) -> None:
    print(f"[serve] {message}", file=sys.stderr, flush=True)


@dataclass
class Child:
    name: str
    argv: list[str]
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restart_at: float | None = None
    backoff_s: float = BACKOFF_FIRST_S
    restarts: int = 0
    env: dict | None = field(default=None, repr=False)

    def start(self) -> None:
        self.process = subprocess.Popen(self.argv, cwd=ROOT, preexec_fn=_default_sigint, env=self.env)
        self.started_at = time.monotonic()
        self.restart_at = None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class Supervisor:
    """Keeps every child running until stop() (or a signal): a child that exits is started again
    after its backoff."""

    def __init__(self, children: list[Child], *, poll_s: float = 0.3):
        self.children = children
        self.poll_s = poll_s
        self.stopping: list[int] = []

    def step(self) -> None:
        now = time.monotonic()
        for child in self.children:
            if child.process is None:
                child.start()
            elif child.restart_at is None and not child.running():
                up_s = now - child.started_at
                if up_s >= STABLE_AFTER_S:
                    child.backoff_s = BACKOFF_FIRST_S
                child.restart_at = now + child.backoff_s
                _log(
                    f"{child.name} (pid {child.process.pid}) exited with {child.process.returncode} after "
                    f"{up_s:.0f} s; restarting in {child.backoff_s:.0f} s"
                )
                child.backoff_s = min(child.backoff_s * 2, BACKOFF_MAX_S)
            elif child.restart_at is not None and now >= child.restart_at:
                child.restarts += 1
                child.start()
                _log(f"{child.name} restarted (pid {child.process.pid}, restart {child.restarts})")

    def run(self) -> None:
        while not self.stopping:
            self.step()
            time.sleep(self.poll_s)

    def stop(self) -> None:
        # Ctrl-C in a terminal reaches the children too (same process group), so give them a
        # moment to stop on their own; then ask the rest with SIGINT, which lets both exit cleanly,
        # and only then terminate and kill.
        processes = [child.process for child in self.children if child.process is not None]
        for escalate, wait_s in ((signal.SIGINT, 3), (signal.SIGTERM, GRACE_S), (signal.SIGKILL, 5), (None, 5)):
            deadline = time.monotonic() + wait_s
            for process in processes:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=max(0.1, deadline - time.monotonic()))
            running = [process for process in processes if process.poll() is None]
            if not running or escalate is None:
                break
            for process in running:
                process.send_signal(escalate)


def _hold_embedded_database() -> None:
    """Start or join the embedded PostgreSQL for as long as this process lives."""
    if os.environ.get("DATABASE_URL"):
        return
    from kybernesis.db import embedded_database_url

    data_dir = Path(os.environ.get("KYBERNESIS_DATA_DIR") or ROOT / "var").resolve()
    embedded_database_url(data_dir)


def children(*, host: str, port: str, dev: bool) -> list[Child]:
    manage = [sys.executable, str(ROOT / "manage.py")]
    if dev:
        web = [*manage, "runserver", f"{host}:{port}", "--noreload"]
    else:
        web = [
            sys.executable,
            "-m",
            "gunicorn",
            "--config",
            "python:kybernesis.gunicorn_conf",
            "kybernesis.wsgi:application",
        ]
    env = {**os.environ, "HOST": host, "PORT": port}
    processes = [Child("worker", [*manage, "qcluster"], env=env), Child("web", web, env=env)]
    if os.environ.get("KYBERNESIS_CONSUME_DIR", "").strip():
        # Its own process rather than a periodic task: it reacts to the kernel's file events within the
        # stable interval, and holds no task worker (nor a task timeout) while it waits for files.
        processes.append(Child("consume", [*manage, "consume"], env=env))
    return processes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", action="store_true", help="serve with Django's runserver (development only)")
    args = parser.parse_args(argv)
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    _hold_embedded_database()
    supervisor = Supervisor(children(host=host, port=port, dev=args.dev))

    def on_signal(signum, _frame):
        supervisor.stopping.append(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    server = "runserver (development)" if args.dev else "gunicorn"
    watching = f"; watching {os.environ['KYBERNESIS_CONSUME_DIR'].strip()}" if len(supervisor.children) > 2 else ""
    print(f"Kybernesis on http://{host}:{port}/  ({server}{watching}; Ctrl-C stops them all)", flush=True)
    try:
        supervisor.run()
    finally:
        supervisor.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
