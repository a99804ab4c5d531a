"""SciFact side by side, in one run: Kybernesis through the HTTP API of a fresh server (as `make run`
starts it), Chroma embedded in this process with the same packaged model (and again with the same
weights on torch fp32, as sentence-transformers runs them for most Chroma users), and bm25s in memory.

Used by `manage.py bench_peers`. Every system gets the same documents (title and abstract) and the
same 300 claims; nDCG@10 is judged against SciFact's relevance judgements. Ingest docs/s counts the
embedding; query times count the query's embedding, and for Kybernesis the HTTP round trip too.

Kybernesis is queried twice: right after the import, while its task worker still extracts the graph
(the import queued that work), and again once the worker's queue is empty. Its ranking is the idle
pass's, asked with minScore 0 (ten results, like the peers, not only the good matches); the same
pass with the default good-match rule is reported beside it.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.datasets import read_jsonl, read_qrels
from bench.load import SEED_SCRIPT, Client, Server, percentile

QUEUE_SCRIPT = "from django_q.models import OrmQ; print(OrmQ.objects.count())"
BATCH = 50  # memories per POST /memories/batch (the API takes up to 500), and per Chroma add


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(score / math.log2(i + 2) for i, score in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def _timings(values_ms: list[float], *, digits: int = 1) -> dict:
    ordered = sorted(values_ms)
    return {"p50_ms": round(percentile(ordered, 50), digits), "p95_ms": round(percentile(ordered, 95), digits)}


class SciFact:
    """The corpus, the judged queries and their judgements."""

    def __init__(self, folder: Path, *, docs: int = 0, queries: int = 0):
        self.corpus = read_jsonl(folder / "corpus.jsonl")
        if docs:
            self.corpus = self.corpus[:docs]
        qrels = read_qrels(folder / "qrels.tsv")
        ids = {doc["_id"] for doc in self.corpus}
        self.qrels = {q: {d: s for d, s in rel.items() if d in ids} for q, rel in qrels.items()}
        self.queries = [q for q in read_jsonl(folder / "queries.jsonl") if self.qrels.get(q["_id"])]
        if queries:
            self.queries = self.queries[:queries]

    def ndcg(self, ranked_by_query: dict[str, list[str]]) -> float:
        scores = [ndcg_at_10(ranked_by_query.get(q["_id"], []), self.qrels[q["_id"]]) for q in self.queries]
        return round(statistics.fmean(scores), 4)


def document_text(doc: dict) -> str:
    """What a peer stores for a document: the title, then the abstract (Kybernesis gets them as its
    memory's title and content)."""
    return f"{doc['title']}\n\n{doc['text']}" if doc.get("title") else doc["text"]


# --- Kybernesis -----------------------------------------------------------------------------------


def run_kybernesis(data: SciFact, *, log: Callable[[str], None], extract_timeout: float, keep: bool) -> dict:
    # The query-vector cache is off: every query is embedded, as the peers embed theirs.
    server = Server.fresh("kybernesis-bench-peers-", KYBERNESIS_QUERY_CACHE_SIZE="0")
    data_dir = server.data_dir
    try:
        log(f"kybernesis: fresh data directory {data_dir}; migrating")
        server.manage("migrate", "--noinput")
        server.manage("build_embedding_model")
        token = json.loads(server.manage("shell", "-c", SEED_SCRIPT.format(users=1)).strip().splitlines()[-1])[0]
        server.start()
        # A batch embeds all its chunks before it answers: on a busy machine that can take minutes.
        client = Client(server.base_url, token, keep_alive=True, timeout=900)
        log(f"kybernesis: importing {len(data.corpus)} documents in batches of {BATCH}")
        memory_doc: dict[int, str] = {}
        started = time.perf_counter()
        for first in range(0, len(data.corpus), BATCH):
            docs = data.corpus[first : first + BATCH]
            items = [{"title": (d["title"] or "Untitled")[:200], "content": d["text"]} for d in docs]
            status, content = client.request("POST", "/api/v1/memories/batch", {"items": items})
            if status != 201:
                raise RuntimeError(f"import failed with {status}: {content[:500]!r}")
            for doc, item in zip(docs, json.loads(content)["items"], strict=True):
                memory_doc[item["id"]] = doc["_id"]
        ingest_s = time.perf_counter() - started
        queued_after_import = _queued(server)
        log(f"kybernesis: imported in {ingest_s:.1f} s; {queued_after_import} tasks queued; querying while they run")
        busy, _ = _query_pass(client, data, memory_doc, min_score=0.0)
        queued_after_busy = _queued(server)
        drained_s = _wait_for_queue(server, started=started, timeout=extract_timeout, log=log)
        result = {
            "ingest_docs_per_s": round(len(data.corpus) / ingest_s, 1),
            "ingest_s": round(ingest_s, 1),
            "tasks_queued_after_import": queued_after_import,
            "tasks_queued_after_busy_queries": queued_after_busy,
            # From the first import request until the worker's queue was empty (graph included).
            "import_and_extraction_s": None if drained_s is None else round(drained_s, 1),
            "query_while_extracting": _timings(busy),
        }
        if drained_s is None:
            log("kybernesis: the worker did not finish within --extract-timeout; no idle pass")
            return {**result, "query": None, "ndcg_at_10": None}
        log("kybernesis: queue empty; the idle pass")
        idle, ranked = _query_pass(client, data, memory_doc, min_score=0.0)
        _, ranked_floor = _query_pass(client, data, memory_doc, min_score=None)
        result.update(
            query=_timings(idle),
            ndcg_at_10=data.ndcg(ranked),
            ndcg_at_10_good_matches_only=data.ndcg(ranked_floor),
            busy_p95_over_idle_p95=round(result["query_while_extracting"]["p95_ms"] / _timings(idle)["p95_ms"], 2),
        )
        return result
    finally:
        server.stop()
        if keep:
            log(f"kybernesis: kept {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


def _query_pass(
    client: Client, data: SciFact, memory_doc: dict[int, str], *, min_score: float | None
) -> tuple[list[float], dict[str, list[str]]]:
    timings, ranked = [], {}
    for query in data.queries:
        body: dict = {"query": query["text"][:2000], "limit": 10}
        if min_score is not None:
            body["minScore"] = min_score
        started = time.perf_counter()
        status, content = client.request("POST", "/api/v1/search", body)
        timings.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise RuntimeError(f"search failed with {status}: {content[:500]!r}")
        ranked[query["_id"]] = [memory_doc[r["memoryId"]] for r in json.loads(content)["results"]]
    return timings, ranked


def _queued(server: Server) -> int:
    return int(server.manage("shell", "-c", QUEUE_SCRIPT).strip().splitlines()[-1])


def _wait_for_queue(server: Server, *, started: float, timeout: float, log) -> float | None:
    """Seconds from `started` until the task queue was empty, or None after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        queued = _queued(server)
        if queued == 0:
            return time.perf_counter() - started
        log(f"kybernesis: {queued} tasks still queued")
        time.sleep(10)
    return None


# --- Chroma ---------------------------------------------------------------------------------------


def _chroma_function(function_name: str, encode: Callable[[list[str]], Sequence]):
    """A Chroma embedding function that embeds with `encode` (texts in, one vector each out)."""
    from chromadb.api.types import EmbeddingFunction

    class Function(EmbeddingFunction):
        def __init__(self):
            pass

        def __call__(self, input):
            return list(encode(list(input)))

        @staticmethod
        def name() -> str:
            return function_name

        def get_config(self) -> dict:
            return {}

        @staticmethod
        def build_from_config(config):
            return Function()

    return Function()


def packaged_model_function():
    """A Chroma embedding function over Kybernesis's own model (memories.embedding), so both systems
    embed with the same weights on the same runtime."""
    from memories import embedding

    return _chroma_function("kybernesis-packaged-model", embedding.embed_texts)


def torch_model_function():
    """A Chroma embedding function over the same weights run as most Chroma users run MiniLM:
    sentence-transformers on torch, float32 (the model comes from Kybernesis's package: no hub)."""
    from sentence_transformers import SentenceTransformer

    from memories import embedding

    model = SentenceTransformer(embedding.model_path(), device="cpu")
    return _chroma_function(
        "kybernesis-torch-fp32", lambda texts: model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    )


def run_chroma(data: SciFact, *, embedding_function, label: str, log: Callable[[str], None]) -> dict:
    import chromadb

    folder = Path(tempfile.mkdtemp(prefix="bench-peers-chroma-"))
    try:
        client = chromadb.PersistentClient(path=str(folder), settings=chromadb.Settings(anonymized_telemetry=False))
        collection = client.create_collection(
            "scifact", embedding_function=embedding_function, configuration={"hnsw": {"space": "cosine"}}
        )
        embedding_function(["warm-up"])
        log(f"chroma ({label}): adding {len(data.corpus)} documents")
        started = time.perf_counter()
        for first in range(0, len(data.corpus), BATCH):
            docs = data.corpus[first : first + BATCH]
            collection.add(ids=[d["_id"] for d in docs], documents=[document_text(d) for d in docs])
        ingest_s = time.perf_counter() - started
        timings, ranked = [], {}
        for query in data.queries:
            started = time.perf_counter()
            found = collection.query(query_texts=[query["text"]], n_results=10)
            timings.append((time.perf_counter() - started) * 1000)
            ranked[query["_id"]] = found["ids"][0]
        return {
            "model": label,
            "ingest_docs_per_s": round(len(data.corpus) / ingest_s, 1),
            "ingest_s": round(ingest_s, 1),
            "query": _timings(timings),
            "ndcg_at_10": data.ndcg(ranked),
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def chroma_default_model():
    """Chroma's own default embedding function when its model is already on this machine, else None:
    it downloads the model at first use, and a benchmark here calls no hub."""
    from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

    function = DefaultEmbeddingFunction()
    folder = Path(getattr(function, "DOWNLOAD_PATH", Path.home() / ".cache/chroma/onnx_models/all-MiniLM-L6-v2"))
    return function if (folder / "onnx" / "model.onnx").exists() else None


# --- bm25s ----------------------------------------------------------------------------------------


def run_bm25s(data: SciFact) -> dict:
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs each step at DEBUG

    started = time.perf_counter()
    tokens = bm25s.tokenize([document_text(d) for d in data.corpus], stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    ingest_s = time.perf_counter() - started
    ids = [d["_id"] for d in data.corpus]
    timings, ranked = [], {}
    for query in data.queries:
        started = time.perf_counter()
        query_tokens = bm25s.tokenize([query["text"]], stopwords="en", show_progress=False)
        found, _ = retriever.retrieve(query_tokens, k=10, show_progress=False)
        timings.append((time.perf_counter() - started) * 1000)
        ranked[query["_id"]] = [ids[i] for i in found[0]]
    return {
        "ingest_docs_per_s": round(len(data.corpus) / ingest_s, 1),
        "ingest_s": round(ingest_s, 3),
        "query": _timings(timings, digits=2),
        "ndcg_at_10": data.ndcg(ranked),
    }


def targets(result: dict) -> dict:
    """The issue's targets against this run's figures (a ratio is None when a side did not run)."""
    ours, chroma = result.get("kybernesis") or {}, result.get("chroma") or {}

    def ratio(a, b):
        return round(a / b, 2) if a and b else None

    ingest = ratio(ours.get("ingest_docs_per_s"), chroma.get("ingest_docs_per_s"))
    query = ratio((ours.get("query") or {}).get("p50_ms"), (chroma.get("query") or {}).get("p50_ms"))
    ndcg_gain = (
        round(ours["ndcg_at_10"] - chroma["ndcg_at_10"], 4)
        if ours.get("ndcg_at_10") is not None and chroma.get("ndcg_at_10") is not None
        else None
    )
    busy = ours.get("busy_p95_over_idle_p95")
    torch = result.get("chroma_torch") or {}
    return {
        # The same against Chroma on torch fp32, as the held-out table measured it.
        "ingest_over_chroma_torch": ratio(ours.get("ingest_docs_per_s"), torch.get("ingest_docs_per_s")),
        "query_p50_over_chroma_torch": ratio(
            (ours.get("query") or {}).get("p50_ms"), (torch.get("query") or {}).get("p50_ms")
        ),
        "ingest_over_chroma": ingest,
        "ingest_met": None if ingest is None else ingest >= 1.5,
        "query_p50_over_chroma": query,
        "query_met": None if query is None else query <= 2.0,
        "ndcg_over_chroma": ndcg_gain,
        "ndcg_met": None if ndcg_gain is None else ndcg_gain >= 0.08,
        "busy_p95_over_idle": busy,
        "busy_met": None if busy is None else busy <= 1.3,
    }
