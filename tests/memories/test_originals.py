"""Originals: uploads keep their bytes content-addressed per owner, the page and the API serve them to
the owner only, and every way of deleting a memory removes a file no other memory references."""

from __future__ import annotations

import hashlib
import os
import time

import pytest
from django.db import transaction
from django.test import Client

from memories import original_files, services
from memories.models import Memory, Original
from memories.services import bulk
from memories.services.originals import originals_collect
from tests.factories import MemoryFactory, OriginalFactory, UserFactory
from tests.files import make_pdf
from tests.memories.originals_helpers import upload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("store_dir")]


def keep(user, name: str, data: bytes) -> Memory:
    [result] = services.upload_files(owner=user, files=[upload(name, data)])
    assert result.status == "created", result.error
    return result.memory


def stored_files(root) -> list:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Deletes remove files once their transaction commits; the test's transaction never does."""
    return django_capture_on_commit_callbacks


def page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


PY = b"def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"


def test_an_upload_keeps_its_bytes_with_name_type_size_pages_and_sha256(user, store_dir):
    pdf_bytes = make_pdf(["Page one about revenue.", "Page two about costs."])
    memory = keep(user, "report.pdf", pdf_bytes)
    original = Original.objects.get(memory=memory)
    assert (original.name, original.media_type, original.size, original.page_count) == (
        "report.pdf",
        "application/pdf",
        len(pdf_bytes),
        2,
    )
    assert original.sha256 == hashlib.sha256(pdf_bytes).hexdigest()
    path = store_dir / str(user.pk) / original.sha256[:2] / original.sha256
    assert path.read_bytes() == pdf_bytes
    assert not list(store_dir.rglob(f"{original_files.TEMP_PREFIX}*"))  # written via a temp file, renamed


def test_the_memory_page_shows_the_original_with_open_and_download(user):
    memory = keep(user, "fib.py", PY)
    html = page_client(user).get(f"/memories/{memory.pk}/").content.decode()
    assert "Original file" in html and "fib.py" in html and "text/x-python" in html
    assert f"/memories/{memory.pk}/original/download/" in html and f"/memories/{memory.pk}/original/" in html


def test_download_is_an_attachment_with_the_exact_bytes_and_a_safe_name(user):
    memory = keep(user, 'we"ird name.py', PY)
    response = page_client(user).get(f"/memories/{memory.pk}/original/download/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PY
    assert response["Content-Disposition"].startswith("attachment;")
    assert '"' not in response["Content-Disposition"].split("filename=", 1)[1].strip('"')
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]


def test_open_shows_a_pdf_inline_and_source_code_as_plain_text(user):
    pdf = keep(user, "report.pdf", make_pdf(["Revenue grew."]))
    code = keep(user, "fib.py", PY)
    client = page_client(user)
    opened = client.get(f"/memories/{pdf.pk}/original/")
    assert opened["Content-Type"] == "application/pdf"
    assert opened["Content-Disposition"].startswith("inline;")
    assert "sandbox" not in opened["Content-Security-Policy"]  # Chromium's PDF viewer needs it off
    assert "default-src 'none'" in opened["Content-Security-Policy"]
    text = client.get(f"/memories/{code.pk}/original/")
    assert text["Content-Type"] == "text/plain; charset=utf-8" and text["Content-Disposition"].startswith("inline;")
    assert b"".join(text.streaming_content) == PY


def test_html_is_never_rendered_inline_from_the_users_bytes(user):
    memory = keep(user, "page.html", b"<html><body><p>Hello there</p><script>alert(1)</script></body></html>")
    response = page_client(user).get(f"/memories/{memory.pk}/original/")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]


def test_a_word_file_downloads_when_opened(user):
    from tests.files import make_docx

    memory = keep(user, "plan.docx", make_docx())
    response = page_client(user).get(f"/memories/{memory.pk}/original/")
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Type"] == "application/octet-stream"


def test_another_users_original_is_a_404_on_the_page_and_the_api(user, other_user, other_api):
    memory = keep(user, "fib.py", PY)
    assert page_client(other_user).get(f"/memories/{memory.pk}/original/").status_code == 404
    assert page_client(other_user).get(f"/memories/{memory.pk}/original/download/").status_code == 404
    assert other_api.get(f"/api/v1/memories/{memory.pk}/original").status_code == 404
    assert Client().get(f"/memories/{memory.pk}/original/").status_code in (302, 404)  # signed out


def test_the_api_serves_the_original_and_describes_it_in_camel_case(user, api):
    api_client = api
    memory = keep(user, "fib.py", PY)
    response = api_client.get(f"/api/v1/memories/{memory.pk}/original")
    assert response.status_code == 200 and b"".join(response.streaming_content) == PY
    assert response["Content-Disposition"].startswith("attachment;")
    body = api_client.get(f"/api/v1/memories/{memory.pk}").json()
    assert body["original"] == {
        "name": "fib.py",
        "mediaType": "text/x-python",
        "size": len(PY),
        "pageCount": None,
        "sha256": hashlib.sha256(PY).hexdigest(),
        "url": f"/api/v1/memories/{memory.pk}/original",
    }
    listed = api_client.get("/api/v1/memories").json()
    assert [item["original"]["name"] for item in listed["items"]] == ["fib.py"]
    plain = MemoryFactory(owner=user)
    assert api_client.get(f"/api/v1/memories/{plain.pk}").json()["original"] is None
    assert api_client.get(f"/api/v1/memories/{plain.pk}/original").status_code == 404


def test_a_file_over_the_originals_limit_is_stored_as_a_memory_without_its_original(user, settings, store_dir):
    settings.KYBERNESIS_ORIGINALS_MAX_MB = 0.0001  # about 100 bytes
    memory = keep(user, "long.txt", b"A line of notes that is long enough. " * 10)
    assert not Original.objects.filter(memory=memory).exists()
    assert stored_files(store_dir) == []
    html = page_client(user).get(f"/memories/{memory.pk}/").content.decode()
    assert "long.txt" in html and "its original was not kept" in html


def test_the_off_switch_keeps_no_originals(user, settings, store_dir):
    settings.KYBERNESIS_KEEP_ORIGINALS = False
    memory = keep(user, "fib.py", PY)
    assert not Original.objects.filter(memory=memory).exists()
    assert stored_files(store_dir) == []


def purge(memory) -> None:
    services.memory_delete(memory=memory)
    services.memory_purge(owner=memory.owner_id, memory_id=memory.pk)


def test_purging_a_memory_removes_its_file_unless_another_memory_of_the_owner_shares_it(user, store_dir, on_commit):
    memory = keep(user, "fib.py", PY)
    twin = MemoryFactory(owner=user, content="Another memory made from the same file.")
    OriginalFactory(memory=twin, name="copy.py", data=PY)
    [path] = stored_files(store_dir)
    with on_commit(execute=True):
        purge(memory)
    assert path.exists()  # the twin still references the bytes
    with on_commit(execute=True):
        purge(twin)
    assert not path.exists()


def test_a_delete_keeps_the_file_in_the_trash_and_a_purge_removes_it(user, api, store_dir, on_commit):
    first, second = keep(user, "fib.py", PY), keep(user, "notes.txt", b"Some notes.")
    with on_commit(execute=True):
        assert page_client(user).post(f"/memories/{first.pk}/delete/").status_code == 302
        assert api.delete(f"/api/v1/memories/{second.pk}").status_code == 204
    assert len(stored_files(store_dir)) == 2 and Original.objects.count() == 2
    with on_commit(execute=True):
        assert page_client(user).post(f"/memories/trash/{first.pk}/purge/").status_code == 302
    assert len(stored_files(store_dir)) == 1
    with on_commit(execute=True):
        assert api.delete(f"/api/v1/trash/{second.pk}").status_code == 204
    assert stored_files(store_dir) == []


def test_the_same_bytes_of_two_owners_are_two_files(user, store_dir, on_commit):
    keep(user, "fib.py", PY)
    other = UserFactory()
    theirs = keep(other, "fib.py", PY)
    assert len(stored_files(store_dir)) == 2
    with on_commit(execute=True):
        purge(theirs)
    assert len(stored_files(store_dir)) == 1


def test_deleting_the_account_removes_its_originals(user, store_dir, on_commit):
    keep(user, "fib.py", PY)
    keep(user, "report.pdf", make_pdf(["Revenue grew."]))
    assert len(stored_files(store_dir)) == 2
    with on_commit(execute=True):
        user.delete()
    assert stored_files(store_dir) == []


def test_a_rolled_back_delete_keeps_the_file(user, store_dir):
    memory = keep(user, "fib.py", PY)
    [path] = stored_files(store_dir)
    with pytest.raises(RuntimeError), transaction.atomic():
        Memory.objects.filter(pk=memory.pk).delete()
        raise RuntimeError("roll back")
    assert path.exists() and Original.objects.filter(memory=memory).exists()


def test_a_rolled_back_create_references_nothing_and_its_file_is_collected(user, store_dir):
    with pytest.raises(RuntimeError), transaction.atomic():
        keep(user, "fib.py", PY)
        raise RuntimeError("roll back")
    assert not Original.objects.exists()
    [orphan] = stored_files(store_dir)
    assert originals_collect() == 0  # younger than the grace period: it may belong to a running write
    old = time.time() - 2 * 24 * 3600
    os.utime(orphan, (old, old))
    assert originals_collect() == 1 and not orphan.exists()


def test_collect_leaves_referenced_files_alone(user, store_dir):
    keep(user, "fib.py", PY)
    [path] = stored_files(store_dir)
    old = time.time() - 2 * 24 * 3600
    os.utime(path, (old, old))
    assert originals_collect() == 0 and path.exists()


def test_bulk_delete_keeps_the_files_in_the_trash_and_undo_brings_back_the_same_memory(user, store_dir, on_commit):
    memory = keep(user, "fib.py", PY)
    with on_commit(execute=True):
        result = bulk.memories_bulk(owner=user, memory_ids=[memory.pk], action="delete")
    [path] = stored_files(store_dir)
    assert Original.objects.filter(memory=memory).exists()
    bulk.memories_bulk_undo(owner=user, undo=result.undo)
    restored = Memory.objects.get(owner=user)
    assert restored.pk == memory.pk and restored.original.name == "fib.py"
    assert restored.original.sha256 == hashlib.sha256(PY).hexdigest() and path.read_bytes() == PY

    with on_commit(execute=True):
        bulk.memories_bulk(owner=user, memory_ids=[restored.pk], action="delete")
        services.trash_empty(owner=user)
    assert stored_files(store_dir) == []


def test_an_undo_record_of_an_older_release_still_stores_the_memories_again(user, store_dir):
    undo = {
        "action": "restore",
        "memories": [
            {
                "title": "Old",
                "content": "Deleted before the trash existed.",
                "source": "upload",
                "priority": 0.5,
                "metadata": {},
                "manualTags": ["kept"],
                "pinned": True,
                "original": None,
            }
        ],
    }
    assert bulk.memories_bulk_undo(owner=user, undo=undo) == "Restored 1 memory."
    memory = Memory.objects.get(owner=user)
    assert memory.manual_tags == ["kept"] and memory.pinned


def test_a_queued_large_upload_keeps_its_original(user, settings, store_dir, on_commit):
    settings.KYBERNESIS_ASYNC_UPLOAD_CHARS = 10  # tasks run synchronously in tests
    data = b"A long enough text to be queued for the worker.\n"
    with on_commit(execute=True):
        [result] = services.upload_files(owner=user, files=[upload("queued.txt", data)])
    assert result.status == "queued"
    result.job.refresh_from_db()
    memory = result.job.memory
    assert memory is not None and memory.original.name == "queued.txt"
    assert "_original" not in memory.metadata
    assert original_files.path_for(user.pk, memory.original.sha256).read_bytes() == data


def test_safe_name_drops_paths_quotes_and_control_characters():
    assert original_files.safe_name("../../etc/passwd") == "passwd"
    assert original_files.safe_name('a"b\r\nc.txt') == "abc.txt"
    assert original_files.safe_name("") == "original"
    long = original_files.safe_name("x" * 300 + ".pdf")
    assert len(long) == 255 and long.endswith(".pdf")


def test_the_collect_command_removes_old_orphans_and_prints_json(user, store_dir):
    import json
    from io import StringIO

    from django.core.management import call_command

    with pytest.raises(RuntimeError), transaction.atomic():
        keep(user, "fib.py", PY)
        raise RuntimeError("roll back")
    out = StringIO()
    call_command("originals_collect", "--grace-hours", "0", stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1]) == {"removed": 1}
    assert stored_files(store_dir) == []


def test_the_worker_collects_orphans_every_hour():
    from django_q.models import Schedule

    from memories.services.originals import COLLECT_SCHEDULE, originals_schedule_ensure

    originals_schedule_ensure()
    originals_schedule_ensure()
    (schedule,) = Schedule.objects.filter(name=COLLECT_SCHEDULE)
    assert (schedule.func, schedule.minutes) == ("memories.tasks.originals_collect", 60)
