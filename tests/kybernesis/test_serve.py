"""`make run`'s supervisor keeps the web server and the worker running: a dead child is restarted with backoff."""

from __future__ import annotations

import os
import signal
import sys
import time

from kybernesis import serve


def _step_until(supervisor, condition, *, limit_s: float = 20) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        supervisor.step()
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_killed_child_is_started_again():
    sleeper = serve.Child("web", [sys.executable, "-c", "import time; time.sleep(120)"])
    other = serve.Child("worker", [sys.executable, "-c", "import time; time.sleep(120)"])
    supervisor = serve.Supervisor([sleeper, other])
    try:
        supervisor.step()
        first_pid, other_pid = sleeper.process.pid, other.process.pid
        os.kill(first_pid, signal.SIGKILL)
        assert _step_until(supervisor, lambda: sleeper.restarts == 1 and sleeper.running())
        assert sleeper.process.pid != first_pid
        # The other child was left alone.
        assert other.process.pid == other_pid and other.running() and other.restarts == 0
    finally:
        supervisor.stop()
    assert not sleeper.running() and not other.running()


def test_a_child_that_keeps_dying_waits_longer_each_time(monkeypatch):
    monkeypatch.setattr(serve, "BACKOFF_FIRST_S", 0.05)
    crasher = serve.Child("worker", [sys.executable, "-c", "raise SystemExit(3)"], backoff_s=0.05)
    supervisor = serve.Supervisor([crasher])
    try:
        assert _step_until(supervisor, lambda: crasher.restarts >= 3)
    finally:
        supervisor.stop()
    # 0.05 → 0.1 → 0.2 → 0.4: the wait doubles with every crash in a row, up to the cap.
    assert crasher.backoff_s >= 0.4
    assert crasher.backoff_s <= serve.BACKOFF_MAX_S


def test_make_run_serves_with_gunicorn_and_make_dev_with_runserver():
    production = serve.children(host="127.0.0.1", port="8123", dev=False)
    web = next(child for child in production if child.name == "web")
    assert "gunicorn" in web.argv and "python:kybernesis.gunicorn_conf" in web.argv
    assert web.env["PORT"] == "8123"
    development = serve.children(host="127.0.0.1", port="8123", dev=True)
    assert "runserver" in next(child for child in development if child.name == "web").argv
    assert any("qcluster" in child.argv for child in production)
