"""Benchmark: HTTP load against the real server on a fresh data directory; last line is JSON.

Starts `python -m kybernesis.serve` (gunicorn and the task worker, as `make run` does) on a new
data directory and a free port, seeds --memories memories for --users users through the API, then
runs --clients client threads for --seconds per phase: search only with keep-alive clients, search
only with clients that open a new connection per request, and mixed (70% search, 10% list, 10% get,
10% create; half the clients keep-alive). Every memory whose create answered 201 is read back at
the end: `lost_writes` counts those that are gone. The phases start once the task worker has
finished the seed's enrichment. Each phase reports the CPU time the server's processes and its
PostgreSQL spent per request (`cpu_ms_per_request`), which the machine's other load does not change
the way it changes throughput.

With `--baseline DIR` a second server is started from another source tree (a checkout of main):
each phase runs against it and then against this tree, and `this_over_baseline` gives the ratios.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench.load import bench_load


class Command(BaseCommand):
    help = "Load-test the real web server (gunicorn, as `make run` starts it) through HTTP."

    def add_arguments(self, parser):
        parser.add_argument("--seconds", type=float, default=60.0, help="length of each measured phase")
        parser.add_argument("--clients", type=int, default=16)
        parser.add_argument("--memories", type=int, default=300)
        parser.add_argument("--users", type=int, default=4)
        parser.add_argument(
            "--data",
            default=str(Path(settings.BASE_DIR).parent / "shared/bench/scifact"),
            help="SciFact folder for realistic texts and queries (synthetic text when absent)",
        )
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--keep", action="store_true", help="keep the data directory (and server.log)")
        parser.add_argument(
            "--baseline",
            default=None,
            help="another source tree (a checkout of main, say) served the same way: each phase runs against "
            "it and then against this tree, and the JSON gives both and their ratios",
        )
        parser.add_argument(
            "--settle-timeout",
            type=float,
            default=600,
            help="seconds to wait for the task worker to finish the seed's enrichment before measuring",
        )

    def handle(self, *args, seconds, clients, memories, users, data, seed, keep, baseline, settle_timeout, **options):
        if seconds <= 0 or clients < 1 or users < 1 or memories < users:
            raise CommandError("--seconds, --clients and --users must be positive, --memories at least --users")
        if baseline and not (Path(baseline) / "manage.py").exists():
            raise CommandError(f"--baseline {baseline}: no manage.py there")
        result = bench_load(
            seconds=seconds,
            clients=clients,
            memories=memories,
            users=users,
            data=Path(data) if data else None,
            keep=keep,
            seed=seed,
            log=lambda line: self.stderr.write(line),
            baseline=Path(baseline).resolve() if baseline else None,
            settle_timeout=settle_timeout,
        )
        self.stdout.write(json.dumps(result))
