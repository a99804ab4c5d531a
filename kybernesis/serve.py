"""`make run`'s process manager: the web server and the django-q2 worker together; Ctrl-C stops both.

Both children use the same embedded PostgreSQL (the first to start it creates or starts the
server, the other joins, and the last to exit stops it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRACE_S = 20


def _default_sigint() -> None:
    # A shell that starts `make run &` ignores SIGINT for its children; Python only turns SIGINT
    # into a clean KeyboardInterrupt when it was not ignored at start-up.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def main() -> int:
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    manage = [sys.executable, str(ROOT / "manage.py")]
    children = [
        subprocess.Popen([*manage, "qcluster"], cwd=ROOT, preexec_fn=_default_sigint),
        subprocess.Popen([*manage, "runserver", f"{host}:{port}", "--noreload"], cwd=ROOT,
                         preexec_fn=_default_sigint),
    ]
    stopping: list[int] = []

    def on_signal(signum, _frame):
        stopping.append(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    print(f"Kybernesis on http://{host}:{port}/  (Ctrl-C stops the server and the worker)", flush=True)

    while not stopping and all(child.poll() is None for child in children):
        time.sleep(0.3)

    # Ctrl-C in a terminal reaches the children too (same process group), so give them a moment to
    # stop on their own; then ask the rest with SIGINT, which lets both exit cleanly (and so stop
    # the embedded database), and only then terminate and kill.
    for escalate, wait_s in ((signal.SIGINT, 3), (signal.SIGTERM, GRACE_S), (signal.SIGKILL, 5), (None, 5)):
        deadline = time.monotonic() + wait_s
        for child in children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        running = [child for child in children if child.poll() is None]
        if not running or escalate is None:
            break
        for child in running:
            child.send_signal(escalate)
    codes = [child.returncode for child in children]
    return 0 if stopping else max(code or 0 for code in codes)


if __name__ == "__main__":
    sys.exit(main())
