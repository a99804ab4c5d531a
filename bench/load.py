"""HTTP load against the real server, started as `make run` starts it, on a fresh data directory.

Used by `manage.py bench_load`. Clients are threads of this process: keep-alive clients reuse one
connection (requests.Session); new-connection clients open a TCP connection for every request and
close it, as curl and most scripts do.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import requests
from django.conf import settings

from bench.synthetic import document

ROOT = Path(__file__).resolve().parent.parent

SEED_SCRIPT = """
import json
from django.contrib.auth import get_user_model
from core.auth import api_token_create
tokens = []
for i in range({users}):
    user, _ = get_user_model().objects.get_or_create(username=f"bench-load-{{i}}",
                                                     defaults={{"email": f"bench-load-{{i}}@localhost"}})
    tokens.append(api_token_create(user=user, name="bench_load")[1])
print(json.dumps(tokens))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, round(q / 100 * (len(sorted_values) - 1))))
    return sorted_values[index]


class Server:
    """`python -m kybernesis.serve` (gunicorn + qcluster) on its own data directory and port."""

    def __init__(self, *, data_dir: Path, port: int, log_path: Path, extra_env: dict | None = None, root: Path = ROOT):
        self.root = root
        self.data_dir = data_dir
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self.env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("DATABASE_URL", "KYBERNESIS_TASKS_SYNC", "DJANGO_SETTINGS_MODULE")
        }
        self.env.update(
            {"KYBERNESIS_DATA_DIR": str(data_dir), "HOST": "127.0.0.1", "PORT": str(port), **(extra_env or {})}
        )
        self.process: subprocess.Popen | None = None

    @classmethod
    def fresh(cls, prefix: str, *, root: Path = ROOT, **env: str) -> Server:
        """A server on a new data directory (so a new database) and a free port, reusing the embedding
        model this install has built; `env` sets the server's settings."""
        data_dir = Path(tempfile.mkdtemp(prefix=prefix))
        return cls(
            data_dir=data_dir,
            port=free_port(),
            log_path=data_dir / "server.log",
            root=Path(root),
            extra_env={"KYBERNESIS_EMBEDDING_CACHE_DIR": str(settings.KYBERNESIS_EMBEDDING_CACHE_DIR), **env},
        )

    def manage(self, *args: str, timeout: float = 600) -> str:
        done = subprocess.run(
            [sys.executable, str(self.root / "manage.py"), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {args[0]} failed: {done.stderr[-2000:]}")
        return done.stdout

    def start(self, *, ready_timeout: float = 300) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child writes to it until stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kybernesis.serve"],
            cwd=self.root,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}; see {self.log_path}")
            try:
                if requests.get(f"{self.base_url}/api/v1/memories", timeout=5).status_code == 401:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the server did not answer within {ready_timeout:.0f} s; see {self.log_path}")

    def web_worker_rss_mb(self) -> list[float]:
        """Resident memory of each gunicorn worker (the processes that hold the model)."""
        rss = []
        for pid in _descendants(self.process.pid):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            if "gunicorn" not in cmdline:
                continue
            ppid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
            parent = Path(f"/proc/{ppid}/cmdline").read_bytes().decode(errors="replace")
            if "gunicorn" not in parent:
                continue  # the master
            kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
            rss.append(round(kb / 1024, 1))
        return rss

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time used so far (user + system) by the server's processes (gunicorn, the task worker)
        and by the embedded PostgreSQL's (its postmaster and every backend)."""
        own = _cpu_seconds(_descendants(self.process.pid)) if self.process else 0.0
        database = 0.0
        try:
            postmaster = int((self.data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
            database = _cpu_seconds([postmaster, *_descendants(postmaster)])
        except (OSError, ValueError, IndexError):
            pass
        return {"server": own, "postgres": database, "total": own + database}

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def _cpu_seconds(pids: list[int]) -> float:
    """utime + stime of these processes (those that exited meanwhile count for nothing)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found.append(child)
            todo.append(child)
    return found


@dataclass
class Results:
    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    created: list[tuple[str, int]] = field(default_factory=list)  # (token, memory id) answered 201
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, started: float, status: int | None, error: str = "") -> None:
        elapsed = (time.perf_counter() - started) * 1000
        with self.lock:
            self.latencies_ms.append(elapsed)
            if status is None:
                self.failures[error] += 1
            else:
                self.statuses[status] += 1

    @property
    def errors(self) -> int:
        return sum(self.failures.values()) + sum(n for status, n in self.statuses.items() if status >= 400)

    def summary(self, seconds: float) -> dict:
        values = sorted(self.latencies_ms)
        return {
            "rps": round(len(values) / seconds, 1),
            "p50_ms": round(percentile(values, 50), 1),
            "p95_ms": round(percentile(values, 95), 1),
            "p99_ms": round(percentile(values, 99), 1),
            "requests": len(values),
            "errors": self.errors,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            **({"failures": dict(self.failures)} if self.failures else {}),
        }


class Client:
    """One client thread's connection: kept alive, or opened anew for every request."""

    def __init__(self, base_url: str, token: str, *, keep_alive: bool, timeout: float = 60):
        self.base_url = base_url
        self.timeout = timeout
        self.host, self.port = base_url.removeprefix("http://").split(":")
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self.keep_alive = keep_alive
        self.session = requests.Session() if keep_alive else None

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        if self.session is not None:
            response = self.session.request(
                method, self.base_url + path, data=data, headers=self.headers, timeout=self.timeout
            )
            return response.status_code, response.content
        connection = http.client.HTTPConnection(self.host, int(self.port), timeout=self.timeout)
        try:
            connection.request(method, path, body=data, headers={**self.headers, "Connection": "close"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()


def timed(client: Client, results: Results, method: str, path: str, body: dict | None = None) -> bytes | None:
    started = time.perf_counter()
    try:
        status, content = client.request(method, path, body)
    except (OSError, http.client.HTTPException, requests.RequestException) as exc:
        results.record(started, None, type(exc).__name__)
        return None
    results.record(started, status)
    return content if status < 400 else None


def _stored(client: Client, memory_id: int, *, attempts: int = 20) -> bool:
    """Whether a memory answered 201 can be read back: a 429 (the phase just spent the account's
    rate) or a 503 is waited out as its Retry-After says; any other answer but 200 is a lost write."""
    for _ in range(attempts):
        status, _ = client.request("GET", f"/api/v1/memories/{memory_id}")
        if status not in (429, 503):
            return status == 200
        time.sleep(1)
    raise RuntimeError(f"memory {memory_id} could not be read back: still {status} after {attempts} tries")


def run_phase(
    *,
    base_url: str,
    tokens: list[str],
    queries: list[str],
    known_ids: dict[str, list[int]],
    seconds: float,
    clients: int,
    keep_alive: list[bool],
    mixed: bool,
    seed: int,
    texts: list[tuple[str, str]],
) -> Results:
    results = Results()
    deadline = time.monotonic() + seconds

    def work(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        token = tokens[index % len(tokens)]
        client = Client(base_url, token, keep_alive=keep_alive[index % len(keep_alive)])
        while time.monotonic() < deadline:
            roll = rng.random() if mixed else 0.0
            if roll < 0.7:
                timed(client, results, "POST", "/api/v1/search", {"query": rng.choice(queries), "limit": 10})
            elif roll < 0.8:
                timed(
                    client,
                    results,
                    "GET",
                    "/api/v1/memories?" + urlencode({"limit": 20, "offset": rng.randrange(0, 200)}),
                )
            elif roll < 0.9:
                timed(client, results, "GET", f"/api/v1/memories/{rng.choice(known_ids[token])}")
            else:
                title, text = rng.choice(texts)
                content = timed(
                    client,
                    results,
                    "POST",
                    "/api/v1/memories",
                    {"title": f"Load test: {title}"[:200], "content": text, "tags": ["bench-load"]},
                )
                if content is not None:
                    with results.lock:
                        results.created.append((token, json.loads(content)["id"]))

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 120)
    return results


def load_texts(data: Path | None, count: int, rng: random.Random) -> tuple[list[tuple[str, str]], list[str]]:
    """(title, text) documents and query strings: SciFact when its folder is given and present,
    synthetic prose otherwise."""
    if data is not None and (data / "corpus.jsonl").exists():
        with open(data / "corpus.jsonl") as corpus:
            docs = [json.loads(line) for _, line in zip(range(count * 3), corpus, strict=False)]
        with open(data / "queries.jsonl") as lines:
            queries = [json.loads(line)["text"] for line in lines][:500]
        docs = [(d["title"] or "Untitled", d["text"]) for d in docs if d.get("text")]
        rng.shuffle(docs)
        return docs, queries
    docs = [(f"Synthetic document {i}", document(rng, target_chars=1500)) for i in range(count * 2)]
    queries = [" ".join(rng.choice(text.split()) for _ in range(4)) for _, text in docs[:200]]
    return docs, queries


@dataclass
class Target:
    """One server under test: its source tree, its seeded tokens and memories."""

    name: str
    server: Server
    data_dir: Path
    tokens: list[str] = field(default_factory=list)
    known_ids: dict[str, list[int]] = field(default_factory=dict)


def _seed(target: Target, *, users: int, memories: int, texts: list[tuple[str, str]], log) -> None:
    server = target.server
    log(f"{target.name}: fresh data directory {target.data_dir} (source {server.root}); migrating")
    server.manage("migrate", "--noinput")
    server.manage("build_embedding_model")  # as `make run` does (the model cache is shared)
    target.tokens = json.loads(server.manage("shell", "-c", SEED_SCRIPT.format(users=users)).strip().splitlines()[-1])
    log(f"{target.name}: starting the server on {server.base_url}")
    started = time.monotonic()
    server.start()
    log(f"{target.name}: answering after {time.monotonic() - started:.1f} s; seeding {memories} memories")
    per_user = [memories // users + (1 if i < memories % users else 0) for i in range(users)]
    position = 0
    for token, count in zip(target.tokens, per_user, strict=True):
        # A batch embeds all its chunks before it answers: on a busy machine that can take minutes.
        client = Client(server.base_url, token, keep_alive=True, timeout=900)
        ids = target.known_ids.setdefault(token, [])
        for first in range(0, count, 50):
            items = [
                {"title": title[:200], "content": text, "tags": ["bench-load"]}
                for title, text in texts[position + first : position + min(count, first + 50)]
            ]
            status, content = client.request("POST", "/api/v1/memories/batch", {"items": items})
            if status != 201:
                raise RuntimeError(f"seeding failed with {status}: {content[:500]!r}")
            ids.extend(item["id"] for item in json.loads(content)["items"])
        position += count


def _settle(target: Target, *, timeout: float, log) -> float | None:
    """Wait until the server's task worker has nothing queued (the seed's graph extraction, tags and
    tiers), so that the phases measure serving, not serving beside a bulk enrichment."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        queued = int(target.server.manage("shell", "-c", QUEUE_SCRIPT).strip().splitlines()[-1])
        if queued == 0:
            return round(time.monotonic() - started, 1)
        log(f"{target.name}: {queued} tasks queued; waiting")
        time.sleep(5)
    log(f"{target.name}: still busy after {timeout:.0f} s; measuring anyway")
    return None


QUEUE_SCRIPT = "from django_q.models import OrmQ; print(OrmQ.objects.count())"
PHASES = (
    ("search", [True], False),
    ("search_new_connection", [False], False),
    ("mixed", [True, False], True),
)


def bench_load(
    *,
    seconds: float,
    clients: int,
    memories: int,
    users: int,
    data: Path | None,
    keep: bool,
    seed: int,
    log,
    baseline: Path | None = None,
    settle_timeout: float = 600,
) -> dict:
    """The phases against a server of this source tree, and with `baseline` (another checkout, e.g.
    the main branch) against one of that tree too: both are seeded and settled first, then each
    phase runs against one and then the other, so the two see the same machine load."""
    rng = random.Random(seed)
    texts, queries = load_texts(data, memories, rng)
    seeded = texts[:memories]
    texts = texts[memories:] or texts
    targets: list[Target] = []
    for name, root in (("baseline", baseline), ("this", ROOT)) if baseline else (("this", ROOT),):
        # A fresh database and data directory. The query-vector cache is off: queries repeat here far
        # more than in real use.
        server = Server.fresh(f"kybernesis-bench-load-{name}-", root=Path(root), KYBERNESIS_QUERY_CACHE_SIZE="0")
        targets.append(Target(name=name, server=server, data_dir=server.data_dir))
    try:
        for target in targets:
            _seed(target, users=users, memories=memories, texts=seeded, log=log)
        settled = {target.name: _settle(target, timeout=settle_timeout, log=log) for target in targets}
        phases: dict[str, dict] = {target.name: {} for target in targets}
        created: dict[str, list[tuple[str, int]]] = {target.name: [] for target in targets}
        for target in targets:
            log(f"{target.name}: warm-up, 5 s of searches (not measured)")
            run_phase(
                **_common(target, queries, clients, texts),
                seconds=min(5, seconds),
                keep_alive=[True],
                mixed=False,
                seed=seed,
            )
        for index, (phase, keep_alive, mixed) in enumerate(PHASES):
            for target in targets:
                log(f"{target.name}: phase {phase}, {clients} clients for {seconds:g} s")
                cpu_before = target.server.cpu_seconds()
                results = run_phase(
                    **_common(target, queries, clients, texts),
                    seconds=seconds,
                    keep_alive=keep_alive,
                    mixed=mixed,
                    seed=seed + 1 + index,
                )
                cpu = {key: value - cpu_before[key] for key, value in target.server.cpu_seconds().items()}
                summary = results.summary(seconds)
                served = max(1, summary["requests"])
                summary["cpu_ms_per_request"] = {key: round(value * 1000 / served, 2) for key, value in cpu.items()}
                summary["load_average"] = round(os.getloadavg()[0], 2)
                phases[target.name][phase] = summary
                created[target.name].extend(results.created)
                log(f"  {json.dumps(summary)}")
        reports = {}
        for target in targets:
            rss = target.server.web_worker_rss_mb()
            lost = sum(
                not _stored(Client(target.server.base_url, token, keep_alive=True), memory_id)
                for token, memory_id in created[target.name]
            )
            reports[target.name] = {
                **phases[target.name],
                "errors": sum(phase["errors"] for phase in phases[target.name].values()),
                "lost_writes": lost,
                "writes": len(created[target.name]),
                "settled_s": settled[target.name],
                "web_workers": len(rss),
                "web_worker_rss_mb": rss,
            }
        result = {**reports["this"], "clients": clients, "seconds": seconds}
        if baseline:
            result["baseline"] = {**reports["baseline"], "source": str(baseline)}
            result["this_over_baseline"] = {
                phase: {
                    "rps": _ratio(reports["this"][phase]["rps"], reports["baseline"][phase]["rps"]),
                    "p95_ms": _ratio(reports["this"][phase]["p95_ms"], reports["baseline"][phase]["p95_ms"]),
                    "cpu_ms_per_request": _ratio(
                        reports["this"][phase]["cpu_ms_per_request"]["total"],
                        reports["baseline"][phase]["cpu_ms_per_request"]["total"],
                    ),
                }
                for phase, _, _ in PHASES
            }
        return result
    finally:
        for target in targets:
            target.server.stop()
            if keep:
                log(f"kept {target.data_dir}")
            else:
                shutil.rmtree(target.data_dir, ignore_errors=True)


def _common(target: Target, queries: list[str], clients: int, texts: list[tuple[str, str]]) -> dict:
    return {
        "base_url": target.server.base_url,
        "tokens": target.tokens,
        "queries": queries,
        "known_ids": target.known_ids,
        "clients": clients,
        "texts": texts,
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None
