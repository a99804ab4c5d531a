"""gunicorn's hooks: the app is preloaded, a large request body is followed by a heap trim, and only
an exiting worker (never the master) leaves without the interpreter's clean-up."""

from __future__ import annotations

import importlib
import logging
import os
from types import SimpleNamespace

import pytest

from core import heap


@pytest.fixture
def conf(monkeypatch):
    # The config module sets environment defaults for the workers it starts; keep this process's.
    saved = dict(os.environ)
    try:
        import kybernesis.gunicorn_conf as module

        yield importlib.reload(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_app_is_preloaded_unless_turned_off(conf, monkeypatch):
    assert conf.preload_app is True
    monkeypatch.setenv("KYBERNESIS_WEB_PRELOAD", "false")
    assert importlib.reload(conf).preload_app is False


@pytest.mark.parametrize(
    ("length", "trimmed"), [("200000", True), ("65536", True), ("1000", False), ("", False), ("x", False)]
)
def test_a_large_request_body_is_followed_by_a_heap_trim(conf, monkeypatch, length, trimmed):
    calls = []
    monkeypatch.setattr(heap, "release_memory", lambda: calls.append(1) or True)
    conf.post_request(None, None, {"CONTENT_LENGTH": length}, None)
    assert bool(calls) is trimmed


def test_worker_exit_in_the_master_returns(conf, monkeypatch):
    exits = []
    monkeypatch.setattr(os, "_exit", exits.append)
    monkeypatch.setattr(logging, "shutdown", lambda: None)  # the worker flushes its logs; not this process
    conf.worker_exit(None, SimpleNamespace(pid=os.getpid() + 1, booted=True))  # the master, noting a dead worker
    assert exits == []
    conf.worker_exit(None, SimpleNamespace(pid=os.getpid(), booted=True))  # the worker itself
    conf.worker_exit(None, SimpleNamespace(pid=os.getpid(), booted=False))
    assert exits == [0, 3]  # 3: gunicorn's boot error, which stops the master rather than looping
