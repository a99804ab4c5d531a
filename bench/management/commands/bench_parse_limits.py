"""Parser limits: how fast and with how little memory hostile compressed files are refused.

Builds a .docx bomb with honest sizes (document.xml inflating to --inflated-mb, padded with a 1 MB
stored entry), one whose local header and central directory lie about the size, and a PDF whose one
stream inflates to --inflated-mb; then parses each, and a batch of --batch small bombs through one
request's shared budget. The last printed line is JSON: for each, the outcome, the seconds and the
growth of the process's resident memory (RSS) while it was parsed.
"""

from __future__ import annotations

import gc
import json
import threading
import time

import psutil
from django.conf import settings
from django.core.management.base import BaseCommand

from bench import bombs
from memories.parsers import ExtractionError, InflateBudget, extract


def _measure(run) -> dict:
    """Run and time `run`, sampling the resident memory every 2 ms for its peak."""
    process = psutil.Process()
    gc.collect()
    before = process.memory_info().rss
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        run()
        outcome, status = "accepted", 200
    except ExtractionError as exc:
        outcome, status = str(exc), getattr(exc, "status", 422)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    peak[0] = max(peak[0], process.memory_info().rss)
    return {
        "status": status,
        "outcome": outcome,
        "seconds": round(seconds, 3),
        "rss_growth_mb": round((peak[0] - before) / 1e6, 1),
    }


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--inflated-mb", type=int, default=196)
        parser.add_argument("--batch", type=int, default=50)

    def handle(self, *args, **options):
        mb = options["inflated_mb"]
        import pypdf  # noqa: F401 - imports are not what is measured

        per_file = settings.KYBERNESIS_MAX_INFLATED_BYTES
        files = {
            "docx_honest_sizes.docx": bombs.docx_bomb(inflated_mb=mb),
            "docx_lying_sizes.docx": bombs.docx_lying_sizes(inflated_mb=mb),
            "pdf_stream_bomb.pdf": bombs.pdf_bomb(inflated_mb=mb),
        }
        result: dict = {"inflated_mb": mb, "max_inflated_bytes": per_file}
        for name, data in files.items():
            result[name] = {"bytes": len(data), **_measure(lambda n=name, d=data: extract(n, d, max_inflated=per_file))}
        # Many files that each stay under the per-file limit, through one request's budget.
        small = bombs.docx_bomb(inflated_mb=max(1, per_file // (1024 * 1024) // 2), padding_mb=0)
        budget = InflateBudget(settings.KYBERNESIS_MAX_REQUEST_INFLATED_BYTES)
        statuses: dict[str, int] = {}

        def batch():
            for i in range(options["batch"]):
                try:
                    extract(f"small-{i}.docx", small, budget=budget, max_inflated=per_file)
                    key = "accepted"
                except ExtractionError as exc:
                    key = str(getattr(exc, "status", 422))
                statuses[key] = statuses.get(key, 0) + 1

        result["batch_of_small_bombs"] = {
            "files": options["batch"],
            "bytes_each": len(small),
            **_measure(batch),
            "per_file_status": statuses,
        }
        self.stdout.write(json.dumps(result))
