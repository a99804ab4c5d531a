"""`manage.py consume`: watch the folder of KYBERNESIS_CONSUME_DIR (what `make run` starts), or take
what is in it now and stop (`--once`)."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories.consume.watcher import Watcher, configured_folder


class Command(BaseCommand):
    help = (
        "Upload every file dropped into the watched folder (KYBERNESIS_CONSUME_DIR) into the account "
        "KYBERNESIS_CONSUME_USER names, or into the account each subfolder is named after; each file ends in "
        "done/ or failed/ with a .reason.txt. Without --once it watches until stopped (Ctrl-C, SIGTERM)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="take the files there now, then stop")
        parser.add_argument("--folder", help="the folder to watch (default: KYBERNESIS_CONSUME_DIR)")
        parser.add_argument(
            "--user",
            help="the account to file into, by username or email (default: KYBERNESIS_CONSUME_USER; with neither, "
            "one subfolder per account)",
        )
        parser.add_argument("--stable-seconds", type=float, help="default: KYBERNESIS_CONSUME_STABLE_SECONDS")
        parser.add_argument("--polling", action="store_true", help="poll instead of file events (network drives)")
        parser.add_argument(
            "--timeout", type=float, default=600.0, help="with --once: stop waiting for files still written after this"
        )

    def handle(self, *args, once, folder, user, stable_seconds, polling, timeout, **options):
        from django.conf import settings

        path = Path(folder).expanduser().absolute() if folder else configured_folder()
        if path is None:
            raise CommandError("no folder to watch: set KYBERNESIS_CONSUME_DIR (or pass --folder)")
        if stable_seconds is not None and stable_seconds < 0:
            raise CommandError("--stable-seconds must not be negative")
        account = settings.KYBERNESIS_CONSUME_USER if user is None else user
        watcher = Watcher(
            path=path, user=account, stable_s=stable_seconds, polling=True if polling else None, poll_s=None
        )

        def on_signal(signum, _frame):
            if watcher.stop.is_set():
                # A second signal (make run's supervisor follows SIGINT with SIGTERM) stops the file
                # being read too: its transaction rolls back and the next start reads it again.
                raise SystemExit(128 + signum)
            watcher.stop.set()
            watcher.wake.set()

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        who = f"into {account!r}" if account else "one subfolder per account"
        if once:
            self._once(watcher, timeout, who)
            return
        self.stderr.write(f"Watching {path} ({who}); files are read once unchanged for {watcher.stable_s:g} s")
        watcher.run()
        self.stderr.write("Stopped watching.")

    def _once(self, watcher: Watcher, timeout: float, who: str) -> None:
        try:
            filed = watcher.run_until_settled(timeout_s=timeout)
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            watcher.close()
        if watcher.error:
            raise CommandError(watcher.error)
        counts = Counter(row.status for row in filed)
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "nothing to do"
        for row in filed:
            self.stdout.write(f"{row.status:9} {row.name} → {row.destination}")
        self.stdout.write(f"{watcher.path} ({who}): {len(filed)} file{'' if len(filed) == 1 else 's'}: {summary}")
