"""PostgreSQL's memory while a benchmark runs: the server processes' proportional set size (PSS,
shared buffers split between the processes that touched them, so the sum is what the server really
holds) and one backend's resident peak, sampled from /proc.

Only for a server on this machine that runs as this user (the embedded one); otherwise every figure
is None and nothing fails."""

from __future__ import annotations

import threading
from pathlib import Path

from django.db import DatabaseError, connection, transaction

SAMPLE_S = 0.5


def _kb(path: Path, key: str) -> int | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def server_pids() -> list[int]:
    """The postmaster and its children (backends, parallel workers, background processes)."""
    try:
        # Only a superuser or pg_read_all_settings may read it; a server elsewhere is not sampled.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SHOW data_directory")
            data_dir = Path(cursor.fetchone()[0])
    except DatabaseError:
        return []
    try:
        postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    except (OSError, ValueError, IndexError):
        return []
    return [postmaster, *map(int, children)]


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


class Sampler:
    """Samples the server's total PSS and `backend`'s RSS and PSS every SAMPLE_S seconds while it is
    open (a context manager), and keeps the peaks in MB."""

    def __init__(self, backend: int):
        self.backend = backend
        self.peaks: dict[str, float | None] = {"server_pss_mb": None, "backend_rss_mb": None, "backend_pss_mb": None}
        self._pids = server_pids()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        total = 0
        for pid in self._pids + self._children():
            pss = _kb(Path(f"/proc/{pid}/smaps_rollup"), "Pss:")
            total += pss or 0
        if total:
            self._peak("server_pss_mb", total)
        self._peak("backend_rss_mb", _kb(Path(f"/proc/{self.backend}/status"), "VmRSS:"))
        self._peak("backend_pss_mb", _kb(Path(f"/proc/{self.backend}/smaps_rollup"), "Pss:"))

    def _children(self) -> list[int]:
        """Processes started since (parallel index build workers come and go)."""
        if not self._pids:
            return []
        try:
            now = Path(f"/proc/{self._pids[0]}/task/{self._pids[0]}/children").read_text().split()
        except OSError:
            return []
        known = set(self._pids)
        return [int(pid) for pid in now if int(pid) not in known]

    def _peak(self, key: str, kb: int | None) -> None:
        if kb is not None:
            mb = round(kb / 1024, 1)
            current = self.peaks[key]
            self.peaks[key] = mb if current is None else max(current, mb)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self._sample()

    def __enter__(self) -> Sampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
