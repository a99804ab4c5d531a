"""Export and import carry the originals: once per distinct file under originals/, each memory record
pointing at its entry; the import checks size and sha256 and keeps the file with its memory or neither."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest

from memories import original_files, services
from memories.models import Memory, Original
from portability import services as portability
from portability.services import export as portability_export
from tests.factories import MemoryFactory, OriginalFactory, UserFactory
from tests.files import make_pdf
from tests.memories.originals_helpers import upload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("store_dir")]

PY = b"def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"


@pytest.fixture
def account(user):
    """Two files kept as originals, a third memory sharing the PDF's bytes, and a plain note."""
    pdf = make_pdf(["Quarterly revenue grew by a tenth.", "Costs stayed flat."])
    services.upload_files(owner=user, files=[upload("report.pdf", pdf), upload("fib.py", PY)])
    twin = MemoryFactory(owner=user, content="A copy of the report, filed under another name.")
    OriginalFactory(memory=twin, name="report copy.pdf", media_type="application/pdf", data=pdf, page_count=2)
    MemoryFactory(owner=user, content="A note typed in, with no file behind it.")
    return user


def export_bytes(owner) -> bytes:
    return b"".join(portability.export_zip_stream(owner=owner))


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def records(files: dict[str, bytes]) -> list[dict]:
    return [json.loads(line) for line in files["memories.jsonl"].splitlines()]


def import_bytes(owner, data: bytes, tmp_path, name="export.zip") -> portability.ImportReport:
    path = tmp_path / name
    path.write_bytes(data)
    return portability.import_path(owner=owner, path=path)


def rezip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_the_export_holds_each_distinct_original_once_and_the_records_point_at_them(account):
    files = entries(export_bytes(account))
    kept = {name: data for name, data in files.items() if name.startswith("originals/")}
    assert len(kept) == 2  # the PDF and its twin share one entry
    for data in kept.values():
        name = next(n for n, d in kept.items() if d == data)
        assert name.startswith(f"originals/{hashlib.sha256(data).hexdigest()}.")
    with_original = [r for r in records(files) if "original" in r]
    assert sorted(r["original"]["name"] for r in with_original) == ["fib.py", "report copy.pdf", "report.pdf"]
    for record in with_original:
        assert files[record["original"]["path"]] and record["original"]["size"] == len(
            files[record["original"]["path"]]
        )
    report = next(r for r in with_original if r["original"]["name"] == "report.pdf")
    assert report["original"]["pageCount"] == 2 and report["original"]["mediaType"] == "application/pdf"
    manifest = json.loads(files["manifest.json"])
    assert manifest["counts"]["originals"] == 2 and "originals/" in manifest["files"]


def test_round_trip_restores_the_originals_byte_for_byte_and_exports_identically(account, tmp_path, store_dir):
    first = export_bytes(account)
    newcomer = UserFactory()
    report = import_bytes(newcomer, first, tmp_path)
    assert (report.created, report.failed, report.error) == (4, 0, "")
    restored = {o.name: o for o in Original.objects.filter(owner=newcomer)}
    assert sorted(restored) == ["fib.py", "report copy.pdf", "report.pdf"]
    assert original_files.path_for(newcomer.pk, restored["fib.py"].sha256).read_bytes() == PY
    assert restored["report.pdf"].page_count == 2

    again = entries(export_bytes(newcomer))
    before = entries(first)
    assert {n: d for n, d in again.items() if n.startswith("originals/")} == {
        n: d for n, d in before.items() if n.startswith("originals/")
    }

    def originals_of(files):
        return sorted((r["contentHash"], json.dumps(r.get("original"), sort_keys=True)) for r in records(files))

    assert originals_of(again) == originals_of(before)


def test_a_second_import_adds_no_originals(account, tmp_path):
    data = export_bytes(account)
    newcomer = UserFactory()
    import_bytes(newcomer, data, tmp_path)
    again = import_bytes(newcomer, data, tmp_path)
    assert (again.created, again.duplicates) == (0, 4)
    assert Original.objects.filter(owner=newcomer).count() == 3


def test_a_corrupted_original_fails_its_memory_alone(account, tmp_path, store_dir):
    files = entries(export_bytes(account))
    fib = next(r for r in records(files) if (r.get("original") or {}).get("name") == "fib.py")
    files[fib["original"]["path"]] = PY.replace(b"fib", b"bif")  # same size, other bytes
    newcomer = UserFactory()
    report = import_bytes(newcomer, rezip(files), tmp_path)
    assert report.created == 3 and report.failed == 1
    [error] = report.errors
    assert "sha256" in error["error"] and "damaged" in error["error"]
    assert not Memory.objects.filter(owner=newcomer, content_hash=fib["contentHash"]).exists()
    # Nothing of the refused file is left behind, not even a temp file.
    kept = {p.name for p in (store_dir / str(newcomer.pk)).rglob("*") if p.is_file()}
    assert kept == {o.sha256 for o in Original.objects.filter(owner=newcomer)}


def test_an_original_over_the_limit_fails_its_memory_with_the_reason(account, tmp_path, settings):
    data = export_bytes(account)
    settings.KYBERNESIS_ORIGINALS_MAX_MB = 0.0001  # about 100 bytes: the PDFs are larger, fib.py is not
    newcomer = UserFactory()
    report = import_bytes(newcomer, data, tmp_path)
    assert report.failed == 2 and report.created == 2
    assert all("limit" in e["error"] for e in report.errors)
    assert [o.name for o in Original.objects.filter(owner=newcomer)] == ["fib.py"]


@pytest.mark.parametrize(
    "path",
    ["../../etc/passwd", "originals/../manifest.json", "originals/sub/file", "/etc/passwd", "memories.jsonl"],
)
def test_an_original_path_outside_originals_is_refused_for_that_memory(account, tmp_path, path):
    files = entries(export_bytes(account))
    lines = records(files)
    target = next(r for r in lines if r.get("original"))
    target["original"]["path"] = path
    files["memories.jsonl"] = "\n".join(json.dumps(r) for r in lines).encode() + b"\n"
    newcomer = UserFactory()
    report = import_bytes(newcomer, rezip(files), tmp_path)
    assert report.failed == 1 and report.created == 3
    assert "original" in report.errors[0]["error"]


def test_a_missing_original_entry_fails_its_memory(account, tmp_path):
    files = entries(export_bytes(account))
    fib = next(r for r in records(files) if (r.get("original") or {}).get("name") == "fib.py")
    del files[fib["original"]["path"]]
    report = import_bytes(UserFactory(), rezip(files), tmp_path)
    assert report.failed == 1 and "is not in the zip" in report.errors[0]["error"]


def test_an_original_that_inflates_past_its_declared_size_is_stopped(account, tmp_path):
    files = entries(export_bytes(account))
    fib = next(r for r in records(files) if (r.get("original") or {}).get("name") == "fib.py")
    entry = fib["original"]["path"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data if name != entry else PY * 1000)
    raw = bytearray(buffer.getvalue())
    # Lie about the entry's size in the central directory: say it is as small as fib.py.
    offset = _central_record(raw, entry)
    raw[offset + 24 : offset + 28] = len(PY).to_bytes(4, "little")
    newcomer = UserFactory()
    report = import_bytes(newcomer, bytes(raw), tmp_path)
    assert (report.created, report.failed) == (3, 1) and report.error == ""
    assert not Original.objects.filter(owner=newcomer, name="fib.py").exists()


def _central_record(raw: bytearray, entry: str) -> int:
    name = entry.encode()
    position = 0
    while (position := raw.find(b"PK\x01\x02", position)) >= 0:
        length = int.from_bytes(raw[position + 28 : position + 30], "little")
        if raw[position + 46 : position + 46 + length] == name:
            return position
        position += 4
    raise AssertionError(f"{entry} has no central directory record")


def test_with_keeping_off_the_import_stores_the_memories_without_originals(account, tmp_path, settings):
    data = export_bytes(account)
    settings.KYBERNESIS_KEEP_ORIGINALS = False
    newcomer = UserFactory()
    report = import_bytes(newcomer, data, tmp_path)
    assert (report.created, report.failed) == (4, 0)
    assert not Original.objects.filter(owner=newcomer).exists()


def test_the_export_streams_originals_a_piece_at_a_time(user, settings):
    big = bytes(range(256)) * 16 * 1024 * 3  # 12 MB that does not compress
    OriginalFactory(memory=MemoryFactory(owner=user), name="big.bin", media_type="application/octet-stream", data=big)
    pieces = list(portability.export_zip_stream(owner=user))
    assert max(len(p) for p in pieces) < 4 * 1024 * 1024
    files = entries(b"".join(pieces))
    assert files[f"originals/{hashlib.sha256(big).hexdigest()}.bin"] == big


def test_the_export_reads_without_a_server_side_cursor(account, monkeypatch):
    """The response streams in autocommit: a server-side cursor there is WITH HOLD, fetched from in
    later transactions, which a transaction pooler (PgBouncer) may hand to another server connection.
    Every read of the export is a plain query, a batch at a time."""
    from django.db import connection

    services.chat_message_send(owner=account, content="Where did the report's numbers come from?")

    def refused():
        raise AssertionError("the export opened a server-side cursor")

    monkeypatch.setattr(connection, "chunked_cursor", refused)
    files = entries(export_bytes(account))
    assert len(records(files)) == 5 and len(files["chat_sessions.jsonl"].splitlines()) == 1
    assert sum(name.startswith("originals/") for name in files) == 2


def test_keyset_batches_read_every_row_once_in_order(account):
    """Originals in (sha256, memory) order, one per batch: the two memories sharing the PDF's bytes
    have the same sha256, so the second key decides between them."""
    rows = Original.objects.filter(owner=account)
    expected = list(rows.order_by("sha256", "memory_id").values_list("pk", flat=True))
    assert len(expected) == 3 and len(set(rows.values_list("sha256", flat=True))) == 2
    for batch_size in (1, 2, 500):
        read = [o.pk for o in portability_export._keyset(rows, ("sha256", "memory_id"), batch_size)]
        assert read == expected
