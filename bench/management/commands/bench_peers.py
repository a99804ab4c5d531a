"""Benchmark: SciFact side by side with peers, in one run; last line is JSON.

Kybernesis through the HTTP API of a fresh server (`python -m kybernesis.serve`, as `make run` starts
it, on its own port and data directory), Chroma embedded in this process with Kybernesis's packaged
model as its embedding function and again with the same weights on torch fp32, and bm25s in memory
(bench/peers.py says what is measured). Chroma and bm25s are the `bench` extra: `pip install -e
'.[bench]'`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import peers


class Command(BaseCommand):
    help = "nDCG@10, ingest docs/s and query p50/p95 on SciFact: Kybernesis (HTTP), Chroma and bm25s."

    def add_arguments(self, parser):
        parser.add_argument(
            "--data",
            default=str(Path(settings.BASE_DIR).parent / "shared/bench/scifact"),
            help="folder with corpus.jsonl, queries.jsonl, qrels.tsv",
        )
        parser.add_argument("--docs", type=int, default=0, help="only the first N documents (0: all)")
        parser.add_argument("--queries", type=int, default=0, help="only the first N judged queries (0: all)")
        parser.add_argument(
            "--systems", default="kybernesis,chroma,bm25s", help="which of kybernesis, chroma, bm25s to run"
        )
        parser.add_argument(
            "--extract-timeout",
            type=float,
            default=3600,
            help="seconds to wait for Kybernesis's worker to empty its queue before the idle pass",
        )
        parser.add_argument("--keep", action="store_true", help="keep Kybernesis's data directory (and server.log)")

    def handle(self, *args, data, docs, queries, systems, extract_timeout, keep, **options):
        folder = Path(data)
        if not (folder / "corpus.jsonl").exists():
            raise CommandError(f"no corpus.jsonl in {folder}")
        wanted = [name.strip() for name in systems.split(",") if name.strip()]
        unknown = set(wanted) - {"kybernesis", "chroma", "bm25s"}
        if unknown or not wanted:
            raise CommandError(f"--systems takes kybernesis, chroma and bm25s; got {systems!r}")
        if {"chroma", "bm25s"} & set(wanted):
            try:
                import bm25s  # noqa: F401
                import chromadb  # noqa: F401
            except ImportError as exc:
                raise CommandError(f"{exc.name} is missing: pip install -e '.[bench]'") from exc
        scifact = peers.SciFact(folder, docs=docs, queries=queries)
        log = self.stderr.write
        log(f"SciFact: {len(scifact.corpus)} documents, {len(scifact.queries)} judged queries")
        result: dict = {
            "data_set": "scifact",
            "documents": len(scifact.corpus),
            "queries": len(scifact.queries),
            "cores": os.cpu_count(),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        }
        # Kybernesis first: its server is stopped before the peers run in this process.
        if "kybernesis" in wanted:
            result["kybernesis"] = peers.run_kybernesis(scifact, log=log, extract_timeout=extract_timeout, keep=keep)
        if "chroma" in wanted:
            result["chroma"] = peers.run_chroma(
                scifact, embedding_function=peers.packaged_model_function(), label="packaged int8 ONNX", log=log
            )
            result["chroma_torch"] = peers.run_chroma(
                scifact, embedding_function=peers.torch_model_function(), label="torch fp32", log=log
            )
            default = peers.chroma_default_model()
            result["chroma_default_model"] = (
                peers.run_chroma(scifact, embedding_function=default, label="Chroma's default", log=log)
                if default is not None
                else "not run: Chroma downloads its default model at first use, and this benchmark calls no hub"
            )
        if "bm25s" in wanted:
            log("bm25s: indexing and querying")
            result["bm25s"] = peers.run_bm25s(scifact)
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        result["targets"] = peers.targets(result)
        self.stdout.write(json.dumps(result))
