"""The watched folder: a file dropped there is uploaded once, with the upload's parsers, limits and
duplicate rule, then filed into done/ or failed/ with its reason; a file still being written, renamed
or deleted meanwhile, a link, a temporary file and a folder the server cannot write to are each handled
(memories.consume, memories.services.consume)."""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from memories.consume import folder as folder_module
from memories.consume.folder import Inbox
from memories.consume.watcher import Tracker
from memories.models import ConsumedFile, ConsumeWatcher, Memory, UploadJob
from memories.services import consume as consume_service
from tests.factories import UserFactory, make_memory
from tests.memories import scans
from tests.memories.consume_helpers import drop_files, files_under, real_texts, settle, watcher

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def inbox(tmp_path) -> Path:
    path = tmp_path / "consume"
    path.mkdir()
    return path


@pytest.fixture
def watch(inbox, user):
    made = []

    def make(**options):
        w = watcher(inbox, options.pop("account", user.username), **options)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


def reason(path: Path) -> str:
    return path.with_name(path.name + ".reason.txt").read_text()


def test_a_dropped_file_becomes_a_memory_and_lands_in_done_with_what_it_became(inbox, watch, user):
    name, text = real_texts(1)[0]
    (inbox / name).write_text(text)
    [row] = settle(watch())
    memory = Memory.objects.get(owner=user)
    assert (row.status, row.memory, row.filed, row.destination) == ("created", memory, True, f"done/{name}")
    assert memory.source == "upload" and memory.metadata["filename"] == name
    assert (inbox / "done" / name).read_text() == text and not (inbox / name).exists()
    note = reason(inbox / "done" / name)
    assert f"created: memory {memory.pk} “{memory.title}”" in note and f"/memories/{memory.pk}/" in note
    assert f"account: {user.username}" in note and "sha256 " in note
    assert files_under(inbox / "processing") == [] and files_under(inbox / "failed") == []


def test_two_hundred_files_dropped_at_once_are_each_ingested_exactly_once(inbox, watch, user):
    written = drop_files(inbox, 190, copies=10, pdfs=5)
    assert len(written) == 200
    filed = settle(watch())
    rows = ConsumedFile.objects.filter(owner=user)
    assert len(filed) == rows.count() == 200
    assert {row.name for row in rows} == set(written)
    statuses = [row.status for row in rows]
    assert statuses.count("created") == 190 and statuses.count("duplicate") == 10
    assert Memory.objects.filter(owner=user).count() == 190
    # Every file once in done/, byte for byte, each with its reason; nothing left anywhere else.
    done = inbox / "done"
    assert sorted(n for n in files_under(done) if not n.endswith(".reason.txt")) == sorted(written)
    assert all((done / name).read_bytes() == data for name, data in written.items())
    assert len([n for n in files_under(done) if n.endswith(".reason.txt")]) == 200
    assert files_under(inbox / "processing") == [] and files_under(inbox / "failed") == []
    assert [p.name for p in inbox.iterdir() if p.is_file()] == []
    # Of a file and its copy, whichever came first is stored; the other points at it.
    by_content: dict[bytes, list[ConsumedFile]] = {}
    for row in rows:
        by_content.setdefault(written[row.name], []).append(row)
    pairs = [pair for pair in by_content.values() if len(pair) == 2]
    assert len(pairs) == 10
    for pair in pairs:
        first, second = sorted(pair, key=lambda row: row.status)
        assert (first.status, second.status) == ("created", "duplicate") and first.memory == second.memory
        assert "nothing was stored twice" in reason(done / second.name)
    # A second pass finds nothing to do.
    assert settle(watch()) == []
    assert ConsumedFile.objects.count() == 200 and Memory.objects.count() == 190


def test_a_file_is_read_only_once_its_size_and_mtime_have_held_still(inbox, user):
    clock = [100.0]
    w = watcher(inbox, user.username, stable_s=5)
    w.tracker = Tracker(5, clock=lambda: clock[0])
    try:
        path = inbox / "scan.txt"
        path.write_text("The first half of a long letter")
        assert w.step().filed == []  # seen for the first time
        clock[0] += 3
        with path.open("a") as f:
            f.write(", and the second half written three seconds later.")
        assert w.step().filed == []  # it changed: the wait starts again
        clock[0] += 4
        assert w.step().filed == [] and path.exists()
        clock[0] += 1.5
        [row] = w.step().filed
        assert row.status == "created"
        assert Memory.objects.get().content.endswith("the second half written three seconds later.")
    finally:
        w.close()


def test_a_file_written_to_after_it_was_claimed_waits_in_processing_until_it_holds_still(inbox, user):
    path = inbox / "growing.txt"
    path.write_text("Half of what the scanner sends")
    target = Inbox(inbox, user, user.username)
    folder_module.writable_problem(inbox)
    entry = next(folder_module.scan(target))
    claimed = folder_module.claim(target, entry)
    with claimed.path.open("a") as f:
        f.write(" and the rest of it, written after the claim.")
    row = consume_service.consumed_file_run(inbox=target, claimed=claimed)
    assert row.status == "claimed" and not Memory.objects.exists() and claimed.path.exists()
    # The next watcher pass sees it still and reads it whole.
    w = watcher(inbox, user.username)
    try:
        [filed] = settle(w)
    finally:
        w.close()
    assert filed.pk == row.pk and filed.status == "created"
    assert Memory.objects.get().content.endswith("written after the claim.")


def test_a_file_renamed_while_it_is_read_stores_nothing_and_says_why(inbox, watch, monkeypatch):
    (inbox / "letter.txt").write_text("A letter about the harbour fees, renamed half-way through reading.")
    real_read = folder_module.read_all

    def read_and_rename(fd, limit):
        data = real_read(fd, limit)
        [claimed] = list((inbox / "processing").rglob("letter.txt"))
        claimed.rename(claimed.with_name("renamed.txt"))
        return data

    monkeypatch.setattr(folder_module, "read_all", read_and_rename)
    [row] = settle(watch())
    assert row.status == "failed" and "renamed or deleted while it was being read" in row.reason
    assert not Memory.objects.exists()
    assert "nothing was stored" in reason(inbox / "failed" / "letter.txt")


def test_a_file_deleted_before_it_is_read_is_reported_in_failed(inbox, watch, monkeypatch):
    (inbox / "gone.txt").write_text("Deleted by another program right after the claim.")
    real_read = folder_module.read_claimed

    def delete_then_read(claimed, **kwargs):
        claimed.path.unlink()
        return real_read(claimed, **kwargs)

    monkeypatch.setattr(folder_module, "read_claimed", delete_then_read)
    [row] = settle(watch())
    assert row.status == "failed" and "renamed or deleted before it could be read" in row.reason
    assert files_under(inbox / "failed") == ["gone.txt.reason.txt"] and not Memory.objects.exists()


def test_a_link_pointing_outside_the_folder_is_refused_and_never_followed(inbox, watch, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("The server's private notes, which must never become a memory.")
    (inbox / "innocent.txt").symlink_to(secret)
    (inbox / "linked-dir").symlink_to(tmp_path, target_is_directory=True)
    filed = settle(watch())
    assert sorted((row.name, row.status) for row in filed) == [("innocent.txt", "failed"), ("linked-dir", "failed")]
    assert not Memory.objects.exists()
    moved = inbox / "failed" / "innocent.txt"
    assert moved.is_symlink() and os.readlink(moved) == str(secret)  # the link itself, moved
    assert secret.read_text().startswith("The server's private notes")
    assert "symbolic link" in reason(moved) and "outside the watched folder" in reason(moved)


def test_a_named_pipe_is_refused_without_blocking(inbox, watch):
    os.mkfifo(inbox / "pipe")
    [row] = settle(watch())
    assert row.status == "failed" and "not a regular file" in row.reason


def test_hidden_and_temporary_files_are_left_alone(inbox, watch):
    names = [
        ".~lock.report.odt#",
        "report.pdf.part",
        "movie.mp4.crdownload",
        "~$budget.docx",
        ".DS_Store",
        "notes.txt~",
    ]
    for name in names:
        (inbox / name).write_text("a file in the middle of being written")
    (inbox / ".hidden").mkdir()
    (inbox / ".hidden" / "inside.txt").write_text("inside a hidden folder")
    assert settle(watch()) == []
    assert sorted(p.name for p in inbox.iterdir() if p.is_file()) == sorted(names)
    assert not ConsumedFile.objects.exists()


def test_a_refused_file_goes_to_failed_with_the_upload_reason(inbox, watch):
    (inbox / "empty.txt").write_bytes(b"")
    (inbox / "archive.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4)
    filed = {row.name: row for row in settle(watch())}
    assert filed["empty.txt"].status == "failed" and "empty" in filed["empty.txt"].reason
    assert "not a supported file type" in filed["archive.gz"].reason
    assert reason(Path(inbox / "failed" / "archive.gz")).startswith("failed: .gz is not a supported file type")
    assert not Memory.objects.exists()


def test_a_file_over_the_upload_limit_is_refused_without_being_read(inbox, watch, settings, monkeypatch):
    settings.KYBERNESIS_MAX_UPLOAD_BYTES = 1000
    (inbox / "big.txt").write_text("x" * 5000)
    monkeypatch.setattr(folder_module, "read_all", lambda *a: pytest.fail("a file over the limit was read"))
    [row] = settle(watch())
    assert row.status == "failed" and "the limit is 1000 bytes" in row.reason
    assert (inbox / "failed" / "big.txt").stat().st_size == 5000


def test_a_duplicate_names_the_memory_and_the_same_name_twice_is_kept_apart(inbox, watch, user):
    memory = make_memory(user, "Minutes of the harbour board, already stored by hand.")
    (inbox / "minutes.txt").write_text("Minutes of the harbour board, already stored by hand.")
    [row] = settle(watch())
    assert (row.status, row.memory) == ("duplicate", memory)
    (inbox / "minutes.txt").write_text("Other minutes, dropped later under the same name.")
    [second] = settle(watch())
    assert second.status == "created" and second.destination == "done/minutes (2).txt"
    assert (inbox / "done" / "minutes.txt").read_text().startswith("Minutes of the harbour board")
    assert f"already stored as memory {memory.pk}" in reason(inbox / "done" / "minutes.txt")


def test_files_in_subfolders_keep_their_path_in_done(inbox, watch):
    (inbox / "2026" / "march").mkdir(parents=True)
    (inbox / "2026" / "march" / "receipt.txt").write_text("Receipt for a new anchor chain, paid in March.")
    [row] = settle(watch())
    assert row.name == "2026/march/receipt.txt" and (inbox / "done" / "2026" / "march" / "receipt.txt").exists()


def test_one_subfolder_per_account_files_into_that_account(inbox, watch, user):
    other = UserFactory(username="bea", email="bea@example.org")
    (inbox / user.username).mkdir()
    (inbox / "bea@example.org").mkdir()  # an account's folder may be named by its email address
    (inbox / "nobody").mkdir()
    (inbox / user.username / "mine.txt").write_text("A note for the first account only.")
    (inbox / "bea@example.org" / "hers.txt").write_text("A note for Bea's account only.")
    (inbox / "nobody" / "lost.txt").write_text("A note in a folder that names no account.")
    (inbox / "top.txt").write_text("A note at the top, which belongs to nobody.")
    w = watch(account="")
    filed = {row.name: row for row in settle(w)}
    assert Memory.objects.get(owner=user).content == "A note for the first account only."
    assert Memory.objects.get(owner=other).content == "A note for Bea's account only."
    assert (inbox / user.username / "done" / "mine.txt").exists() and (
        inbox / "bea@example.org" / "done" / "hers.txt"
    ).exists()
    assert filed["top.txt"].status == "failed" and "belongs to nobody" in filed["top.txt"].reason
    assert (inbox / "failed" / "top.txt").exists()
    # The unknown account's files wait where they are, and the status says why.
    assert (inbox / "nobody" / "lost.txt").exists() and "lost.txt" not in filed
    status = ConsumeWatcher.objects.get(folder=str(inbox))
    assert "no active account" in status.inboxes[str(inbox / "nobody")]["problem"]
    assert status.inboxes[str(inbox / "nobody")]["waiting"] == 1


def test_an_unknown_account_is_an_error_and_no_file_is_touched(inbox, watch):
    (inbox / "letter.txt").write_text("Waits until the account exists.")
    w = watch(account="no-such-person")
    assert settle(w) == []
    assert "names no active account" in w.error and (inbox / "letter.txt").exists()
    assert "names no active account" in ConsumeWatcher.objects.get().error


def test_a_folder_the_server_cannot_write_to_is_reported_and_checked_again(inbox, watch, user):
    (inbox / "letter.txt").write_text("Waits until the folder can be written to.")
    (inbox / "done").write_text("a file where the done/ folder should be")
    if os.geteuid() != 0:
        inbox.chmod(0o555)
    w = watch()
    try:
        assert settle(w) == []
        assert "cannot write to" in w.error and "needs write access" in w.error
        assert (inbox / "letter.txt").exists() and not ConsumedFile.objects.exists()
        assert "cannot write to" in ConsumeWatcher.objects.get().error
    finally:
        inbox.chmod(0o755)
    (inbox / "done").unlink()
    w._checked.clear()  # the watcher checks again every RECHECK_S seconds
    [row] = settle(w)
    assert row.status == "created" and w.error == ""


def test_a_missing_folder_is_reported_and_never_made_as_it_may_be_a_drive_not_mounted(tmp_path, user):
    missing = tmp_path / "nas" / "scans"
    w = watcher(missing, user.username)
    try:
        assert settle(w) == []
        assert "does not exist" in w.error and "not mounted" in w.error
        assert not missing.exists()
        missing.mkdir(parents=True)
        (missing / "later.txt").write_text("Dropped once the drive was mounted.")
        w._checked.clear()
        [row] = settle(w)
    finally:
        w.close()
    assert row.status == "created" and (missing / "done" / "later.txt").exists()


def test_a_restart_finishes_each_state_a_killed_watcher_left(inbox, user):
    target = Inbox(inbox, user, user.username)
    folder_module.writable_problem(inbox)
    texts = [text for _, text in real_texts(4)]
    # 1. Claimed (renamed into processing/) and stopped before its row was written.
    (inbox / "a.txt").write_text(texts[0])
    folder_module.claim(target, next(folder_module.scan(target)))
    # 2. Uploaded (memory and outcome committed) and stopped before it was moved.
    (inbox / "b.txt").write_text(texts[1])
    b = folder_module.claim(target, next(e for e in folder_module.scan(target) if e.name == "b.txt"))
    row = consume_service.consumed_file_register(inbox=target, claimed=b)
    consume_service._upload(row, target, consume_service._Dropped("b.txt", len(texts[1]), texts[1].encode()))
    # 3. Its destination chosen and the reason written, stopped before the rename.
    (inbox / "c.txt").write_text(texts[2])
    c = folder_module.claim(target, next(e for e in folder_module.scan(target) if e.name == "c.txt"))
    row_c = consume_service.consumed_file_register(inbox=target, claimed=c)
    consume_service._upload(row_c, target, consume_service._Dropped("c.txt", len(texts[2]), texts[2].encode()))
    row_c.refresh_from_db()
    row_c.destination = "done/c.txt"
    row_c.save()
    folder_module.write_atomic(inbox / "done" / "c.txt.reason.txt", "written before the stop")
    # 4. Moved to done/ (claim folder removed) and stopped before its row was marked filed.
    (inbox / "d.txt").write_text(texts[3])
    d = folder_module.claim(target, next(e for e in folder_module.scan(target) if e.name == "d.txt"))
    row_d = consume_service.consumed_file_register(inbox=target, claimed=d)
    row_d = consume_service._upload(row_d, target, consume_service._Dropped("d.txt", len(texts[3]), texts[3].encode()))
    row_d.destination = "done/d.txt"
    row_d.save()
    folder_module.file_away(target, d, row_d.destination, consume_service.reason_text(row_d, target))
    assert Memory.objects.count() == 3 and len(files_under(inbox / "processing")) == 3

    w = watcher(inbox, user.username)
    try:
        filed = settle(w)
    finally:
        w.close()
    assert sorted((r.name, r.status) for r in filed) == [
        ("a.txt", "created"),
        ("b.txt", "created"),
        ("c.txt", "created"),
        ("d.txt", "created"),
    ]
    assert Memory.objects.count() == 4 and ConsumedFile.objects.count() == 4
    assert not ConsumedFile.objects.filter(filed=False).exists()
    assert sorted(files_under(inbox / "done")) == sorted(f"{n}{s}" for n in "abcd" for s in (".txt", ".txt.reason.txt"))
    assert "created: memory" in reason(inbox / "done" / "c.txt")
    assert files_under(inbox / "processing") == []


def test_a_second_watcher_on_the_folder_waits_for_the_first(inbox, user):
    first = watcher(inbox, user.username)
    assert first.hold_lock()
    second = watcher(inbox, user.username)
    # A second session of the database: the lock is a session's, so one connection cannot test it.
    from django.db import connections

    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [7_413, consume_watcher_key(inbox)])
            assert cursor.fetchone()[0] is False
    finally:
        other.close()
        first.close()
    assert second.hold_lock()
    second.close()


def test_the_command_refuses_to_run_beside_a_watcher_that_holds_the_folder(inbox, user):
    from django.db import connections

    (inbox / "note.txt").write_text("Left for the watcher that holds the folder.")
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [7_413, consume_watcher_key(inbox)])
            assert cursor.fetchone()[0] is True
        with pytest.raises(CommandError, match="another watcher is running on this folder"):
            call_command("consume", "--once", "--folder", str(inbox), "--user", user.username)
    finally:
        other.close()
    assert (inbox / "note.txt").exists() and not ConsumedFile.objects.exists()


def consume_watcher_key(path: Path) -> int:
    from memories.consume.watcher import folder_key

    return folder_key(path)


@scans.needs_tesseract
def test_a_scan_waits_in_processing_until_its_ocr_job_has_read_it(inbox, watch, user):
    from memories import services

    (inbox / "scan.png").write_bytes(scans.image_bytes([scans.PHRASE]))
    w = watch()
    assert settle(w) == []
    row = ConsumedFile.objects.get()
    assert row.status == "queued" and row.job.kind == "ocr"
    assert files_under(inbox / "processing") != [] and files_under(inbox / "done") == []
    assert ConsumeWatcher.objects.get().inboxes[str(inbox)]["processing"] == 1
    services.ocr_upload_run(job_id=row.job_id)  # the task worker
    [filed] = settle(w)
    memory = UploadJob.objects.get().memory
    assert (filed.status, filed.memory) == ("created", memory) and (inbox / "done" / "scan.png").exists()
    assert "harbour" in memory.content.lower()


def test_a_scan_whose_ocr_job_was_cancelled_lands_in_failed(inbox, watch, user):
    from memories import services

    (inbox / "scan.pdf").write_bytes(scans.scanned_pdf([[scans.PHRASE]]))
    w = watch()
    settle(w)
    row = ConsumedFile.objects.get()
    if row.status != "queued":
        pytest.skip(f"the scan was not queued for OCR here: {row.status} {row.reason}")
    services.upload_job_cancel(job=row.job)
    [filed] = settle(w)
    assert filed.status == "failed" and "cancelled" in filed.reason and (inbox / "failed" / "scan.pdf").exists()


def test_the_command_takes_what_is_there_once_and_says_what_it_did(inbox, user, capsys):
    drop_files(inbox, 3)
    (inbox / "empty.txt").write_bytes(b"")
    call_command("consume", "--once", "--folder", str(inbox), "--user", user.email, "--stable-seconds", "0")
    out = capsys.readouterr().out
    assert "4 files: 3 created, 1 failed" in out and "empty.txt → failed/empty.txt" in out
    assert Memory.objects.filter(owner=user).count() == 3


def test_the_command_needs_a_folder(settings):
    settings.KYBERNESIS_CONSUME_DIR = ""
    with pytest.raises(CommandError, match="KYBERNESIS_CONSUME_DIR"):
        call_command("consume", "--once")


def test_the_command_names_an_unknown_account(inbox):
    with pytest.raises(CommandError, match="names no active account"):
        call_command("consume", "--once", "--folder", str(inbox), "--user", "nobody@example.org")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("polling", [False, True], ids=["events", "polling"])
def test_the_watcher_picks_up_a_dropped_file_and_stops_cleanly(inbox, polling):
    user = UserFactory()
    w = watcher(inbox, user.username, stable_s=0.2, polling=polling, poll_s=0.2)
    thread = threading.Thread(target=w.run, daemon=True)
    thread.start()
    try:
        time.sleep(0.3)
        (inbox / "dropped.txt").write_text("Dropped while the watcher runs; its events wake it.")
        deadline = time.monotonic() + 30
        while not (inbox / "done" / "dropped.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (inbox / "done" / "dropped.txt").exists()
        assert Memory.objects.filter(owner=user).count() == 1
        assert ConsumeWatcher.objects.get().mode == ("polling" if polling else "events")
    finally:
        w.stop.set()
        w.wake.set()
        thread.join(timeout=15)
    assert not thread.is_alive()
    assert ConsumeWatcher.objects.get().stopped is True


def test_temporary_names_and_reserved_folders_never_wake_the_watcher(inbox):
    from memories.consume.watcher import _WakeOnChange

    wake = threading.Event()
    handler = _WakeOnChange(inbox, wake)

    class Event:
        def __init__(self, src, dest=""):
            self.src_path, self.dest_path = src, dest

    for quiet in [inbox / "done" / "a.txt", inbox / "x.part", inbox / "ada" / "processing" / "c" / "f.txt"]:
        handler.dispatch(Event(str(quiet)))
    assert not wake.is_set()
    handler.dispatch(Event(str(inbox / "x.part"), str(inbox / "x.pdf")))  # a download finished
    assert wake.is_set()


def test_the_upload_page_says_where_the_folder_is_and_what_waits_there(inbox, user, settings, logged_in_client):
    settings.KYBERNESIS_CONSUME_DIR, settings.KYBERNESIS_CONSUME_USER = str(inbox), user.email
    (inbox / "empty.txt").write_bytes(b"")
    w = watcher(inbox, user.email)
    try:
        settle(w)
        w.tracker.stable_s = 3600  # the next file is still being written
        (inbox / "arriving.pdf").write_bytes(b"%PDF-1.4 half of it")
        w._status_written = None
        w.step()
        page = logged_in_client.get("/upload/").content.decode()
    finally:
        w.close()
    assert "Watched folder" in page and str(inbox) in page
    assert "watching" in page and "1 file waiting" in page
    assert "last failed" in page and "empty.txt" in page and "empty" in page
    assert "1 failed" in page  # what it filed in the last day


def test_the_upload_page_says_when_the_watcher_is_not_running_and_why_it_cannot_work(
    inbox, user, settings, logged_in_client
):
    settings.KYBERNESIS_CONSUME_DIR, settings.KYBERNESIS_CONSUME_USER = str(inbox), ""
    page = logged_in_client.get("/upload/").content.decode()
    assert str(inbox / user.username) in page and "not started" in page and "manage.py consume" in page
    assert "Create the folder to start" in page
    ConsumeWatcher.objects.create(
        folder=str(inbox),
        seen_at=timezone.now() - timedelta(hours=1),
        error="the server cannot write to /srv/scans: Permission denied",
    )
    page = logged_in_client.get("/upload/").content.decode()
    assert (
        "not running" in page
        and "last seen 1" in page
        and "The server cannot write to /srv/scans: Permission denied" in page
    )


def test_the_watched_folder_line_is_only_for_the_account_it_files_into(inbox, user, settings):
    from django.test import Client

    settings.KYBERNESIS_CONSUME_DIR, settings.KYBERNESIS_CONSUME_USER = str(inbox), user.username
    client = Client()
    client.force_login(UserFactory())
    assert "Watched folder" not in client.get("/upload/").content.decode()
    settings.KYBERNESIS_CONSUME_DIR = ""
    client.force_login(user)
    assert "Watched folder" not in client.get("/upload/").content.decode()


def test_make_run_starts_the_watcher_only_when_a_folder_is_set(monkeypatch):
    from kybernesis import serve

    monkeypatch.delenv("KYBERNESIS_CONSUME_DIR", raising=False)
    assert [c.name for c in serve.children(host="127.0.0.1", port="8000", dev=False)] == ["worker", "web"]
    monkeypatch.setenv("KYBERNESIS_CONSUME_DIR", "/srv/scans")
    consume = serve.children(host="127.0.0.1", port="8000", dev=False)[-1]
    assert consume.name == "consume" and consume.argv[-1] == "consume"


def test_the_counts_on_the_page_follow_a_long_pass_file_by_file(inbox, watch, monkeypatch):
    from memories.consume import watcher as watcher_module

    drop_files(inbox, 6)
    monkeypatch.setattr(watcher_module, "STATUS_EVERY_S", 0)
    seen = []
    real_run = watcher_module.consumed_file_run

    def run_and_look(**kwargs):
        seen.append(ConsumeWatcher.objects.get().inboxes[str(inbox)]["waiting"])
        return real_run(**kwargs)

    monkeypatch.setattr(watcher_module, "consumed_file_run", run_and_look)
    assert len(settle(watch())) == 6
    assert seen == [6, 5, 4, 3, 2, 1]
    assert ConsumeWatcher.objects.get().inboxes[str(inbox)] == {"waiting": 0, "processing": 0, "problem": ""}
