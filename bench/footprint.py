"""The memory of the `make run` process tree, per process role, and search latency while the task
worker is busy: used by `manage.py bench_footprint`.

Memory is read from /proc/PID/smaps_rollup. RSS counts every page a process maps, so the RSS of
processes that share pages (forked children, gunicorn workers forked from a preloaded master, the
same libraries) adds up to more than the machine holds. PSS divides each shared page among the
processes that map it: the PSS of a tree sums to what the tree costs the machine. USS (private
pages) is what a process would give back if it exited.
"""

from __future__ import annotations

import json
import random
import shutil
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench.load import Client, Server, load_texts, percentile, run_phase

TASK_WORKER_NAME = "qcluster-worker"  # the comm name core.task_workers gives each task worker

SEED_SCRIPT = """
import json
from django.contrib.auth import get_user_model
from core.auth import api_token_create
user, _ = get_user_model().objects.get_or_create(username="bench-footprint",
                                                 defaults={"email": "bench-footprint@localhost"})
print(json.dumps(api_token_create(user=user, name="bench_footprint")[1]))
"""
DSN_SCRIPT = "from sleep.child import _database_url; print(_database_url())"


def smaps_rollup(pid: int) -> dict[str, float] | None:
    """RSS, PSS and USS (private) of a process in MB, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return None
    kb: dict[str, int] = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            kb[parts[0].rstrip(":")] = int(parts[1])
    private = kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)
    return {"rss_mb": kb.get("Rss", 0) / 1024, "pss_mb": kb.get("Pss", 0) / 1024, "uss_mb": private / 1024}


def _read(pid: int, name: str) -> str:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def process_tree(root: int) -> list[dict]:
    """Every process under `root` (itself included) with its role, depth first.

    Roles: supervisor (kybernesis.serve), web master and web worker (gunicorn), qcluster main,
    qcluster sentinel, qcluster worker (a task worker), qcluster monitor/pusher, task child (a
    process a task worker started: the sleep cycle's child, a forked extraction pool, OCR),
    watcher (manage.py consume)."""
    found: list[dict] = []

    def walk(pid: int, parent_role: str) -> None:
        cmdline = _read(pid, "cmdline")
        if parent_role == "":
            role = "supervisor"
        elif parent_role == "supervisor":
            if "gunicorn" in cmdline:
                role = "web master"
            elif "qcluster" in cmdline:
                role = "qcluster main"
            elif " consume" in cmdline:
                role = "watcher"
            else:
                role = "other"
        elif parent_role == "web master":
            role = "web worker"
        elif parent_role == "qcluster main":
            role = "qcluster sentinel"
        elif parent_role == "qcluster sentinel":
            role = "qcluster worker" if _read(pid, "comm") == TASK_WORKER_NAME else "qcluster monitor/pusher"
        elif parent_role in ("qcluster worker", "task child"):
            role = "task child"
        else:
            role = f"{parent_role} child"
        found.append({"pid": pid, "role": role, "nice": _nice(pid)})
        for child in _children(pid):
            walk(child, role)

    walk(root, "")
    return found


def _nice(pid: int) -> int | None:
    stat = _read(pid, "stat")
    try:
        return int(stat.rsplit(")", 1)[1].split()[16])
    except (IndexError, ValueError):
        return None


def snapshot(root: int) -> dict:
    """The tree's memory now: per process, per role, and the totals."""
    processes = []
    for entry in process_tree(root):
        memory = smaps_rollup(entry["pid"])
        if memory is not None:
            processes.append({**entry, **{key: round(value, 1) for key, value in memory.items()}})
    roles: dict[str, dict] = defaultdict(lambda: {"count": 0, "rss_mb": 0.0, "pss_mb": 0.0})
    for process in processes:
        role = roles[process["role"]]
        role["count"] += 1
        role["rss_mb"] = round(role["rss_mb"] + process["rss_mb"], 1)
        role["pss_mb"] = round(role["pss_mb"] + process["pss_mb"], 1)
    return {
        "processes": processes,
        "roles": dict(roles),
        "total_pss_mb": round(sum(p["pss_mb"] for p in processes), 1),
        "total_rss_mb": round(sum(p["rss_mb"] for p in processes), 1),
    }


class Sampler:
    """Samples the tree every `interval` seconds on a thread; keeps each phase's peak total PSS
    and the roles' PSS at that peak."""

    def __init__(self, root: int, *, interval: float = 1.0):
        self.root = root
        self.interval = interval
        self.phase = "start"
        self.peaks: dict[str, dict] = {}  # phase: the snapshot (roles and total) of its peak
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            shot = snapshot(self.root)
            peak = self.peaks.get(self.phase)
            if peak is None or shot["total_pss_mb"] > peak["total_pss_mb"]:
                self.peaks[self.phase] = {
                    "total_pss_mb": shot["total_pss_mb"],
                    "roles": {role: figures["pss_mb"] for role, figures in shot["roles"].items()},
                }

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def pending_tasks(dsn: str) -> int:
    """Tasks queued or running in the ORM broker."""
    import psycopg

    with psycopg.connect(dsn) as connection:
        return connection.execute("SELECT count(*) FROM django_q_ormq").fetchone()[0]


def _drain(dsn: str, timeout: float) -> bool:
    """Wait until the task queue is empty; False when it still is not after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while pending_tasks(dsn):
        if time.monotonic() >= deadline:
            return False
        time.sleep(2)
    return True


def search_probe(base_url: str, token: str, queries: list[str], *, seconds: float, clients: int, seed: int) -> dict:
    """`clients` keep-alive clients searching one after another for `seconds`: the latency a
    person searching meets (not a saturation test)."""
    results = run_phase(
        base_url=base_url,
        tokens=[token],
        queries=queries,
        known_ids={token: []},
        seconds=seconds,
        clients=clients,
        keep_alive=[True],
        mixed=False,
        seed=seed,
        texts=[],
    )
    values = sorted(results.latencies_ms)
    return {
        "requests": len(values),
        "errors": results.errors,
        "p50_ms": round(percentile(values, 50), 1),
        "p95_ms": round(percentile(values, 95), 1),
    }


def import_documents(
    base_url: str, token: str, texts: list[tuple[str, str]], *, batch: int = 50
) -> tuple[float, list[int]]:
    """Store the documents through the batch API; returns the seconds it took and the new ids."""
    client = Client(base_url, token, keep_alive=True)
    ids: list[int] = []
    started = time.monotonic()
    for first in range(0, len(texts), batch):
        items = [{"title": title[:200], "content": text} for title, text in texts[first : first + batch]]
        status, content = client.request("POST", "/api/v1/memories/batch", {"items": items})
        if status != 201:
            raise RuntimeError(f"the import failed with {status}: {content[:500]!r}")
        ids.extend(item["id"] for item in json.loads(content)["items"])
    return time.monotonic() - started, ids


def _compact(shot: dict) -> dict:
    """A snapshot as the JSON reports it: roles and totals, each process as role, PSS, RSS, nice."""
    return {
        "total_pss_mb": shot["total_pss_mb"],
        "total_rss_mb": shot["total_rss_mb"],
        "roles": shot["roles"],
        "processes": [
            {"role": p["role"], "pss_mb": p["pss_mb"], "rss_mb": p["rss_mb"], "uss_mb": p["uss_mb"], "nice": p["nice"]}
            for p in shot["processes"]
        ],
    }


def bench_footprint(
    *,
    docs: int,
    probe_seconds: float,
    load_seconds: float,
    clients: int,
    data: Path | None,
    drain_timeout: float,
    extra_env: dict,
    keep: bool,
    seed: int,
    log,
) -> dict:
    rng = random.Random(seed)
    texts, queries = load_texts(data, docs, rng)
    texts = texts[:docs]
    # Queries repeat here far more than in real use: the query-vector cache is off.
    server = Server.fresh("kybernesis-bench-footprint-", KYBERNESIS_QUERY_CACHE_SIZE="0", **extra_env)
    data_dir = server.data_dir
    sampler: Sampler | None = None
    try:
        log(f"fresh data directory {data_dir}; migrating")
        server.manage("migrate", "--noinput")
        server.manage("build_embedding_model")
        token = json.loads(server.manage("shell", "-c", SEED_SCRIPT).strip().splitlines()[-1])
        dsn = server.manage("shell", "-c", DSN_SCRIPT).strip().splitlines()[-1]
        log(f"starting the server on {server.base_url}")
        server.start()
        root = server.process.pid
        sampler = Sampler(root)
        sampler.start()
        time.sleep(5)  # the task worker's first poll and the workers' warm-up settle
        phases: dict[str, dict] = {"idle": _compact(snapshot(root))}
        # Most documents first; the rest later, to search while their graph is being extracted.
        first, rest = texts[: max(1, len(texts) * 4 // 5)], texts[max(1, len(texts) * 4 // 5) :]
        log(f"idle: {phases['idle']['total_pss_mb']} MB PSS; importing {len(first)} documents")
        sampler.phase = "import"
        import_s, ids = import_documents(server.base_url, token, first)
        phases["after_import"] = _compact(snapshot(root))
        log(f"imported in {import_s:.1f} s; waiting for the queue to drain")
        sampler.phase = "extracting"
        drained = _drain(dsn, drain_timeout)
        phases["after_extraction"] = _compact(snapshot(root))
        log(f"searching the idle server for {probe_seconds:g} s")
        sampler.phase = "idle_search"
        idle = search_probe(server.base_url, token, queries, seconds=probe_seconds, clients=2, seed=seed)
        log(f"  {json.dumps(idle)}; importing {len(rest)} more documents")
        sampler.phase = "import"
        rest_s, rest_ids = import_documents(server.base_url, token, rest) if rest else (0.0, [])
        ids += rest_ids
        queued_before = pending_tasks(dsn)
        log(f"imported in {rest_s:.1f} s; {queued_before} tasks queued; searching while the worker extracts")
        sampler.phase = "extracting"
        busy = search_probe(server.base_url, token, queries, seconds=probe_seconds, clients=2, seed=seed)
        queued_after = pending_tasks(dsn)
        phases["while_extracting"] = _compact(snapshot(root))
        log(f"  {json.dumps(busy)}; {queued_after} tasks still queued; waiting for the queue to drain")
        drained = _drain(dsn, drain_timeout) and drained
        log(f"load: {clients} new-connection clients, mixed, for {load_seconds:g} s")
        sampler.phase = "load"
        load = run_phase(
            base_url=server.base_url,
            tokens=[token],
            queries=queries,
            known_ids={token: ids},
            seconds=load_seconds,
            clients=clients,
            keep_alive=[False],
            mixed=True,
            seed=seed + 2,
            texts=texts,
        ).summary(load_seconds)
        phases["after_load"] = _compact(snapshot(root))
        log(f"  {json.dumps({k: load[k] for k in ('rps', 'p50_ms', 'p95_ms', 'errors')})}")
        sampler.stop()
        return {
            "docs": len(texts),
            "import_docs_per_s": round(len(first) / import_s, 1) if import_s else None,
            "tasks_queued_before_busy_probe": queued_before,
            "tasks_queued_after_busy_probe": queued_after,
            "extraction_drained": drained,
            "idle_search": idle,
            "search_while_extracting": busy,
            "busy_over_idle_p95": round(busy["p95_ms"] / idle["p95_ms"], 2) if idle["p95_ms"] else None,
            "load": load,
            "peak_pss_mb": {phase: peak["total_pss_mb"] for phase, peak in sampler.peaks.items()},
            "peak_roles_pss_mb": {phase: peak["roles"] for phase, peak in sampler.peaks.items()},
            "total_pss_mb": {name: shot["total_pss_mb"] for name, shot in phases.items()},
            "total_rss_mb": {name: shot["total_rss_mb"] for name, shot in phases.items()},
            "phases": phases,
            "settings": extra_env,
        }
    finally:
        if sampler is not None:
            sampler.stop()
        server.stop()
        if keep:
            log(f"kept {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
