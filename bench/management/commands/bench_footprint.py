"""Benchmark: the memory of the `make run` process tree, per process role; last line is JSON.

Starts `python -m kybernesis.serve` (as `make run` does) on a fresh data directory and a free port,
then reads every process's RSS, PSS and USS (/proc/PID/smaps_rollup) at idle, after importing
--docs SciFact abstracts through the batch API, while the task worker extracts their graph, after
the queue drains, and after --load-seconds of mixed load from --clients new-connection clients.
Search latency is probed twice with 2 clients, on the idle server and while the worker extracts:
`busy_over_idle_p95` is their p95 ratio in one run. `--env NAME=VALUE` sets a server setting (say
KYBERNESIS_Q_WORKERS=2) to measure what it trades.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench.footprint import bench_footprint


class Command(BaseCommand):
    help = "Measure the memory of the real server's process tree at idle, after an import and under load."

    def add_arguments(self, parser):
        parser.add_argument("--docs", type=int, default=5183, help="SciFact abstracts to import (all of them: 5183)")
        parser.add_argument("--probe-seconds", type=float, default=20.0, help="length of each search probe")
        parser.add_argument("--load-seconds", type=float, default=30.0)
        parser.add_argument("--clients", type=int, default=16)
        parser.add_argument("--drain-timeout", type=float, default=1800.0, help="longest wait for the queue")
        parser.add_argument(
            "--data",
            default=str(Path(settings.BASE_DIR).parent / "shared/bench/scifact"),
            help="SciFact folder (corpus.jsonl, queries.jsonl); synthetic text when absent",
        )
        parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="a server setting")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--keep", action="store_true", help="keep the data directory (and server.log)")

    def handle(self, *args, docs, probe_seconds, load_seconds, clients, drain_timeout, data, env, seed, keep, **kw):
        if docs < 1 or probe_seconds <= 0 or load_seconds <= 0 or clients < 1 or drain_timeout < 0:
            raise CommandError("--docs, --probe-seconds, --load-seconds and --clients must be positive")
        extra_env = {}
        for item in env:
            name, sep, value = item.partition("=")
            if not sep or not name.replace("_", "").isalnum() or not name.isupper():
                raise CommandError(f"--env takes NAME=VALUE (an upper-case setting name); got {item!r}")
            extra_env[name] = value
        result = bench_footprint(
            docs=docs,
            probe_seconds=probe_seconds,
            load_seconds=load_seconds,
            clients=clients,
            data=Path(data) if data else None,
            drain_timeout=drain_timeout,
            extra_env=extra_env,
            keep=keep,
            seed=seed,
            log=lambda line: self.stderr.write(line),
        )
        self.stdout.write(json.dumps(result))
