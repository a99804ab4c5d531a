"""The loop that watches the folder: which inboxes it has (one account, or one per account's folder),
when a dropped file has held still long enough to be read, the kernel's events (watchdog) or polling
to wake it, one watcher per folder at a time, and the status the upload page shows.

Events only wake the loop; each pass looks at the folders itself, so an event lost (a full inotify
queue, a network drive that sends none) delays a file by at most one rescan, never loses it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection
from django.utils import timezone

from memories.consume import folder
from memories.consume.folder import Claimed, Inbox
from memories.models import ConsumedFile, ConsumeWatcher
from memories.services.consume import consumed_file_run, consumed_files_settle

logger = logging.getLogger(__name__)

# pg_try_advisory_lock(namespace, key of the folder): one watcher per folder, wherever it runs. The
# lock is the session's, so a watcher killed with -9 lets go of it when its connection drops.
LOCK_NAMESPACE = 7_413
# Seconds before a folder that could be written to is checked again, and one that could not.
WRITABLE_S = 60.0
RECHECK_S = 30.0
# Seconds between passes when nothing wakes the watcher (the safety net under the file events), and
# between status writes and heartbeats; a status older than ALIVE_S means no watcher is running.
STATUS_EVERY_S = 10.0
ALIVE_S = 60.0


def folder_key(path: Path) -> int:
    return zlib.crc32(str(path).encode()) & 0x7FFFFFFF


def configured_folder() -> Path | None:
    raw = settings.KYBERNESIS_CONSUME_DIR
    return Path(raw).expanduser().absolute() if raw else None


def account_named(name: str):
    """The active account a folder or KYBERNESIS_CONSUME_USER names: its username, else its email."""
    users = get_user_model().objects.filter(is_active=True)
    return users.filter(username=name).first() or users.filter(email__iexact=name).order_by("pk").first()


class Tracker:
    """When a file has looked the same (size, mtime, kind) for `stable_s` seconds in a row."""

    def __init__(self, stable_s: float, clock: Callable[[], float] = time.monotonic):
        self.stable_s = stable_s
        self.clock = clock
        self.seen: dict[str, tuple[tuple, float]] = {}

    def stable(self, key: str, signature: tuple | None) -> bool:
        now = self.clock()
        if signature is None:
            self.seen.pop(key, None)
            return False
        previous = self.seen.get(key)
        if previous is None or previous[0] != signature:
            self.seen[key] = (signature, now)
            return self.stable_s <= 0
        return now - previous[1] >= self.stable_s

    def forget(self, key: str) -> None:
        self.seen.pop(key, None)

    def keep_only(self, keys: set[str]) -> None:
        for key in [key for key in self.seen if key not in keys]:
            del self.seen[key]


@dataclass
class Pass:
    """What one pass over the folder did and left."""

    filed: list[ConsumedFile] = field(default_factory=list)
    settling: int = 0  # files seen but not yet still for long enough
    queued: int = 0  # files whose upload job the task worker runs
    inboxes: dict[str, dict] = field(default_factory=dict)

    @property
    def busy(self) -> bool:
        return self.settling > 0


class Watcher:
    """Watches `path`, filing into the account `user` names, or (no user) into the account each
    subfolder is named after."""

    def __init__(
        self,
        *,
        path: Path,
        user: str = "",
        stable_s: float | None = None,
        polling: bool | None = None,
        poll_s: float | None = None,
    ):
        self.path = path
        self.user = user
        self.stable_s = settings.KYBERNESIS_CONSUME_STABLE_SECONDS if stable_s is None else stable_s
        self.polling = settings.KYBERNESIS_CONSUME_POLLING if polling is None else polling
        self.poll_s = settings.KYBERNESIS_CONSUME_POLL_SECONDS if poll_s is None else poll_s
        self.tracker = Tracker(self.stable_s)
        self.wake = threading.Event()
        self.stop = threading.Event()
        self.error = ""
        self.mode = ""
        self._observer = None
        self._checked: dict[str, tuple[float, str]] = {}  # inbox root -> (when, problem)
        self._status_written: tuple[float, str] | None = None
        self._locked = False
        self.started_at = timezone.now()

    # --- inboxes -------------------------------------------------------------------------------

    def inboxes(self) -> list[Inbox]:
        """The inboxes of the folder now, each with the problem that keeps it from being read, if any.
        An error that concerns the whole folder (it cannot be written to, the account is unknown) is
        `self.error`, and no inbox is read."""
        self.error = self._problem(self.path)
        if self.error:
            return []
        if self.user:
            owner = account_named(self.user)
            if owner is None:
                self.error = (
                    f"KYBERNESIS_CONSUME_USER is {self.user!r}, which names no active account (give a username "
                    "or email address); files wait in the folder until it does"
                )
                return []
            return [Inbox(self.path, owner, owner.get_username())]
        found = [
            Inbox(
                self.path,
                None,
                "no account: a file at the top of the watched folder belongs to nobody; put it in the folder of "
                f"an account instead ({self.path}/<username>/)",
                recursive=False,
            )
        ]
        for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
            if entry.name in folder.RESERVED or folder.ignored(entry.name) or not entry.is_dir(follow_symlinks=False):
                continue
            owner = account_named(entry.name)
            root = Path(entry.path)
            if owner is None:
                problem = f"no active account has the username or email address {entry.name!r}; its files wait there"
                found.append(Inbox(root, None, entry.name, problem=problem))
            else:
                found.append(Inbox(root, owner, owner.get_username(), problem=self._problem(root)))
        return found

    def _problem(self, root: Path) -> str:
        now = time.monotonic()
        checked = self._checked.get(str(root))
        if checked is not None and now - checked[0] < (RECHECK_S if checked[1] else WRITABLE_S):
            return checked[1]
        problem = folder.writable_problem(root)
        if problem and (checked is None or checked[1] != problem):
            logger.error("watched folder: %s", problem)
        self._checked[str(root)] = (now, problem)
        return problem

    # --- one pass ------------------------------------------------------------------------------

    def run_pass(self) -> Pass:
        """Look at every inbox once: finish what waits in processing/, then claim and read each dropped
        file that has held still for the stable interval. The counts the page shows are written as
        the pass goes (a pass over a folder of hundreds of files takes minutes)."""
        done = Pass()
        present: set[str] = set()
        work: list[tuple[Inbox, dict, Claimed | folder.Entry]] = []
        for inbox in self.inboxes():
            claims = [] if inbox.problem else list(folder.claims(inbox))
            if not inbox.problem and inbox.owner is not None:
                done.filed += consumed_files_settle(inbox=inbox)
            entries = list(folder.scan(inbox))
            counts = {"waiting": len(entries), "processing": len(claims), "problem": inbox.problem}
            if inbox.owner is not None or inbox.problem or entries:
                done.inboxes[str(inbox.root)] = counts
            work += [(inbox, counts, item) for item in (*claims, *entries)]
        rows = {
            row.claim: row
            for row in ConsumedFile.objects.filter(root__in={str(inbox.root) for inbox, _, _ in work}, filed=False)
        }
        self.write_status(done)
        for inbox, counts, item in work:
            if self.stop.is_set():
                break
            if isinstance(item, Claimed):
                self._finish_claim(inbox, item, rows.get(item.claim), counts, done, present)
            else:
                self._take(inbox, item, counts, done, present)
            self.write_status(done)
        self.tracker.keep_only(present)
        return done

    def _take(self, inbox: Inbox, entry: folder.Entry, counts: dict, done: Pass, present: set[str]) -> None:
        key = str(entry.path)
        present.add(key)
        if inbox.problem or not self.tracker.stable(key, entry.signature):
            done.settling += not inbox.problem
            return
        self.tracker.forget(key)
        try:
            claimed = folder.claim(inbox, entry)
            if claimed is None:
                counts["waiting"] -= 1  # renamed or deleted since the listing
                return
            counts["waiting"] -= 1
            counts["processing"] += 1
            row = consumed_file_run(inbox=inbox, claimed=claimed)
        except OSError as exc:
            # A subfolder the server may not write to, a disk that is full: the rest go on.
            logger.error("watched folder: %s could not be moved: %s", entry.path, exc)
            inbox.problem = inbox.problem or f"{entry.name} could not be moved: {exc.strerror or exc}"
            counts["problem"] = inbox.problem
            return
        self._after(row, claimed, counts, done, present)

    def _finish_claim(
        self, inbox: Inbox, claimed: Claimed, row: ConsumedFile | None, counts: dict, done: Pass, present: set[str]
    ) -> None:
        if row is None or row.status == ConsumedFile.Status.CLAIMED:
            # Read again only once it holds still: its writer may have had it open at the claim.
            key = str(claimed.path)
            present.add(key)
            signature = folder.current_signature(claimed.path)
            if not self.tracker.stable(key, signature):
                done.settling += signature is not None
                return
            self.tracker.forget(key)
            claimed = Claimed(claimed.claim, claimed.name, claimed.path, signature)
        row = consumed_file_run(inbox=inbox, claimed=claimed)
        self._after(row, claimed, counts, done, present)

    def _after(self, row: ConsumedFile, claimed: Claimed, counts: dict, done: Pass, present: set[str]) -> None:
        if row.filed:
            done.filed.append(row)
            counts["processing"] -= 1
        elif row.status == ConsumedFile.Status.QUEUED:
            done.queued += 1
        elif row.status == ConsumedFile.Status.CLAIMED:
            # Changed while it was read (still being written): wait for it to hold still again.
            present.add(str(claimed.path))
            self.tracker.stable(str(claimed.path), folder.current_signature(claimed.path))
            done.settling += 1

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        """Watch until stop is set (a signal, the supervisor's Ctrl-C). A database that goes away is
        waited for; a folder that cannot be written to is reported and checked again; neither ends it."""
        backoff = 1.0
        heartbeat = threading.Thread(target=self._heartbeat, name="consume-heartbeat", daemon=True)
        heartbeat.start()
        try:
            while not self.stop.is_set():
                self._ensure_observer()
                try:
                    result = self.step()
                    backoff = 1.0
                except DatabaseError as exc:
                    logger.warning("watched folder: the database is unavailable (%s); trying again", exc)
                    connection.close()
                    self._locked = False
                    self.stop.wait(backoff)
                    backoff = min(backoff * 2, 30.0)
                    continue
                except Exception as exc:  # reported and retried, never a crash loop
                    logger.exception("watched folder: a pass failed")
                    self.error = f"a pass over the folder failed: {type(exc).__name__}: {exc} (logged)"
                    self._status_written = None
                    self.write_status(Pass())
                    self.stop.wait(backoff)
                    backoff = min(backoff * 2, 30.0)
                    continue
                self._wait(result)
        finally:
            self.close()

    def _heartbeat(self) -> None:
        """Say the watcher is alive while one file takes long (a large text being embedded), from a
        thread of its own with its own database connection."""
        try:
            while not self.stop.wait(STATUS_EVERY_S):
                if self._locked:
                    try:
                        ConsumeWatcher.objects.filter(folder=str(self.path)).update(seen_at=timezone.now())
                    except DatabaseError:
                        connection.close()  # this thread's; the main loop reports the database itself
        finally:
            connection.close()

    def step(self) -> Pass | None:
        """One pass if this watcher holds the folder's lock (None: another watcher does)."""
        if not self.hold_lock():
            if not self.error:
                logger.warning("watched folder: another watcher is running on %s; waiting for it to stop", self.path)
            self.error = "another watcher is running on this folder; this one waits for it to stop"
            return None
        result = self.run_pass()
        self.write_status(result)
        return result

    def _wait(self, result: Pass | None) -> None:
        if result is not None and result.busy:
            timeout = max(0.05, min(1.0, self.stable_s / 2))
        elif result is not None and result.queued:
            timeout = 2.0
        else:
            timeout = self.poll_s if self.polling else STATUS_EVERY_S
        self.wake.wait(timeout)
        self.wake.clear()

    def run_until_settled(self, *, timeout_s: float) -> list[ConsumedFile]:
        """Take what is in the folder now, waiting for each file to hold still, and return the rows filed
        (files queued for the task worker stay in processing/ for the watcher or the next run)."""
        filed: list[ConsumedFile] = []
        deadline = time.monotonic() + timeout_s
        while not self.stop.is_set():
            result = self.step()
            if result is None:
                raise RuntimeError("another watcher is running on this folder: it files what is dropped there")
            filed.extend(result.filed)
            if not result.busy or time.monotonic() > deadline:
                break
            self.stop.wait(max(0.05, min(1.0, self.stable_s / 2)))
        return filed

    def hold_lock(self) -> bool:
        key = folder_key(self.path)
        with connection.cursor() as cursor:
            if self._locked:
                cursor.execute(
                    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
                    " AND classid = %s::int::oid AND objid = %s::int::oid AND objsubid = 2 AND granted)",
                    [LOCK_NAMESPACE, key],
                )
                self._locked = bool(cursor.fetchone()[0])
            if not self._locked:
                cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_NAMESPACE, key])
                self._locked = bool(cursor.fetchone()[0])
        return self._locked

    def release_lock(self) -> None:
        if not self._locked:
            return
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_NAMESPACE, folder_key(self.path)])
        except DatabaseError:
            pass  # the connection is gone, and the lock with it
        self._locked = False

    def write_status(self, result: Pass) -> None:
        """What the upload page shows, written when it changed and at least every STATUS_EVERY_S (only
        by the watcher that holds the folder: a second one waiting must not hide the first's status)."""
        if not self._locked:
            return
        state = json.dumps([self.error, self.mode, result.inboxes], sort_keys=True)
        now = time.monotonic()
        if self._status_written and self._status_written[1] == state and now - self._status_written[0] < STATUS_EVERY_S:
            return
        ConsumeWatcher.objects.update_or_create(
            folder=str(self.path),
            defaults={
                "error": self.error,
                "mode": self.mode,
                "seen_at": timezone.now(),
                "stopped": False,
                "inboxes": result.inboxes,
                "host": socket.gethostname()[:255],
                "pid": os.getpid(),
                "started_at": self.started_at,
            },
        )
        self._status_written = (now, state)

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        try:
            if self._locked:
                ConsumeWatcher.objects.filter(folder=str(self.path)).update(stopped=True, seen_at=timezone.now())
        except DatabaseError:
            pass
        self.release_lock()

    # --- events ----------------------------------------------------------------------------------

    def _ensure_observer(self) -> None:
        """Events once the folder exists (it may be a drive mounted later), started again if its thread
        died (the folder was removed and made again)."""
        if self._observer is not None and self._observer.is_alive():
            return
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        if self.path.is_dir():
            try:
                self._start_observer()
            except OSError as exc:  # the folder went away meanwhile: the next pass says so and retries
                logger.warning("watched folder: cannot watch %s: %s", self.path, exc)

    def _start_observer(self) -> None:
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        handler = _WakeOnChange(self.path, self.wake)
        if not self.polling:
            try:
                observer = Observer()
                observer.schedule(handler, str(self.path), recursive=True)
                observer.start()
                self._observer, self.mode = observer, "events"
                return
            except OSError as exc:
                # inotify's watch or instance limit (fs.inotify.max_user_watches): poll instead.
                logger.warning("watched folder: no file events (%s); polling every %s s instead", exc, self.poll_s)
        observer = PollingObserver(timeout=self.poll_s)
        observer.schedule(handler, str(self.path), recursive=True)
        observer.start()
        self._observer, self.mode = observer, "polling"


class _WakeOnChange:
    """A watchdog event handler that wakes the loop for a change a person made (not for the watcher's
    own moves into processing/, done/ and failed/, nor for temporary files)."""

    def __init__(self, top: Path, wake: threading.Event):
        self.top = top
        self.wake = wake

    def dispatch(self, event) -> None:
        paths = [p for p in (event.src_path, getattr(event, "dest_path", "")) if p]
        if any(self._matters(os.fsdecode(p)) for p in paths):
            self.wake.set()

    def _matters(self, path: str) -> bool:
        try:
            parts = PurePosixPath(path).relative_to(self.top).parts
        except ValueError:
            return False
        if not parts or folder.ignored(parts[-1]):
            return False
        return not any(part in folder.RESERVED for part in parts[:2])
