"""Benchmark: torch against ONNX Runtime (fp32 and int8) on the same texts in one run; last line is JSON.

Each backend embeds the same texts with the same batch size and threads (KYBERNESIS_EMBED_THREADS,
or one per core). cosine_agreement is the mean cosine between the int8 and torch vectors of each
text (cosine_min the worst); query_p50_ms is the median time to embed one query with onnx-int8.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand

from bench.synthetic import document
from memories import embedding, onnx_embedding


def _texts(data: Path | None, count: int) -> tuple[list[str], list[str]]:
    if data is not None and (data / "corpus.jsonl").exists():
        with open(data / "corpus.jsonl") as corpus:
            docs = [json.loads(line) for _, line in zip(range(count), corpus, strict=False)]
        with open(data / "queries.jsonl") as lines:
            queries = [json.loads(line)["text"] for line in lines][:200]
        return [f"{d['title']}\n{d['text']}"[: settings.KYBERNESIS_CHUNK_SIZE] for d in docs], queries
    rng = random.Random(7)
    texts = [
        document(rng, target_chars=settings.KYBERNESIS_CHUNK_SIZE)[: settings.KYBERNESIS_CHUNK_SIZE]
        for _ in range(count)
    ]
    return texts, [" ".join(text.split()[:8]) for text in texts[:200]]


def _timed(encode, texts: list[str], repeats: int) -> tuple[np.ndarray, float]:
    encode(texts[:8])  # warm up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        vectors = encode(texts)
        best = min(best, time.perf_counter() - started)
    return vectors, len(texts) / best


class Command(BaseCommand):
    help = "Compare embedding backends (torch, onnx, onnx-int8) on the same texts: speed and agreement."

    def add_arguments(self, parser):
        parser.add_argument("--texts", type=int, default=400)
        parser.add_argument("--queries", type=int, default=100)
        parser.add_argument("--repeats", type=int, default=1, help="best of N passes per backend")
        parser.add_argument(
            "--data",
            default=str(Path(settings.BASE_DIR).parent / "shared/bench/scifact"),
            help="SciFact folder (synthetic text when absent)",
        )
        parser.add_argument("--no-fp32", action="store_true", help="skip the ONNX float32 variant")

    def handle(self, *args, texts, queries, repeats, data, no_fp32, **options):
        corpus, query_texts = _texts(Path(data) if data else None, texts)
        query_texts = (query_texts * (queries // max(1, len(query_texts)) + 1))[:queries]
        batch = settings.KYBERNESIS_EMBED_BATCH_SIZE
        threads = settings.KYBERNESIS_EMBED_THREADS or onnx_embedding.threads_default()
        model_path = Path(embedding.model_path())
        cache = Path(settings.KYBERNESIS_EMBEDDING_CACHE_DIR)

        import torch

        torch.set_num_threads(threads)
        model = embedding.get_model()

        def torch_encode(items):
            return model.encode(
                items, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )

        reference = torch_encode
        torch_vectors, torch_rate = _timed(torch_encode, corpus, repeats)
        result = {"texts": len(corpus), "threads": threads, "torch_chunks_per_s": round(torch_rate, 1)}
        variants = ["onnx-int8"] if no_fp32 else ["onnx", "onnx-int8"]
        for variant in variants:
            started = time.perf_counter()
            encoder = onnx_embedding.load(model_path, cache, variant, threads=threads, reference=reference)
            load_s = time.perf_counter() - started
            vectors, rate = _timed(encoder.encode, corpus, repeats)
            cosines = np.sum(vectors * torch_vectors, axis=1)
            key = variant.replace("-", "_")
            result[f"{key}_chunks_per_s"] = round(rate, 1)
            result[f"{key}_speedup"] = round(rate / torch_rate, 2)
            result[f"{key}_cosine_mean"] = round(float(cosines.mean()), 4)
            result[f"{key}_cosine_min"] = round(float(cosines.min()), 4)
            result[f"{key}_load_s"] = round(load_s, 2)
            if variant == "onnx-int8":
                times = []
                for text in query_texts:
                    started = time.perf_counter()
                    encoder.encode([text])
                    times.append((time.perf_counter() - started) * 1000)
                result["query_p50_ms"] = round(statistics.median(times), 2)
        torch_times = []
        for text in query_texts:
            started = time.perf_counter()
            torch_encode([text])
            torch_times.append((time.perf_counter() - started) * 1000)
        result["torch_query_p50_ms"] = round(statistics.median(torch_times), 2)
        result["speedup"] = result["onnx_int8_speedup"]
        result["cosine_agreement"] = result["onnx_int8_cosine_mean"]
        self.stdout.write(
            json.dumps(
                {
                    key: result[key]
                    for key in (
                        "torch_chunks_per_s",
                        "onnx_int8_chunks_per_s",
                        "speedup",
                        "cosine_agreement",
                        "query_p50_ms",
                    )
                }
                | result
            )
        )
