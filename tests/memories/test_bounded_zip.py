"""The one bounded zip reader: members are read by their real bytes within a limit, a ratio and a shared
budget, whatever the archive declares, and each refusal names its rule."""

from __future__ import annotations

import io
import zipfile

import pytest

from bench import bombs
from memories.parsers.bounded_zip import (
    BoundedZip,
    DirectoryTooLarge,
    MemberDamaged,
    MemberEncrypted,
    NotAZip,
    PastBudget,
    PastLimit,
    PastRatio,
    TooManyMembers,
    UnknownMethod,
)
from memories.parsers.budget import InflateBudget

BOUNDS = {"limit": 10**9, "ratio": 100, "ratio_floor": 1024 * 1024}


def zipped(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_members_are_read_whole_and_as_streams_by_line():
    data = zipped({"a.txt": b"one\ntwo\n" * 1000, "b.txt": b"stored"})
    archive = BoundedZip(data, max_members=10)
    a, b = archive.members
    assert archive.read(b, **BOUNDS) == b"stored"
    stream = io.BufferedReader(archive.open(a, **BOUNDS))
    assert stream.readline() == b"one\n" and stream.read().count(b"two\n") == 1000


def test_an_archive_on_disk_reads_the_same(tmp_path):
    path = tmp_path / "notes.zip"
    path.write_bytes(zipped({"note.md": b"# Note\n"}))
    with BoundedZip(path, max_members=10) as archive:
        assert archive.read(archive.members[0], **BOUNDS) == b"# Note\n"


def test_a_member_that_inflates_far_past_its_compressed_bytes_is_refused_by_ratio():
    archive = BoundedZip(bombs.docx_bomb(inflated_mb=12, padding_mb=0), max_members=10)
    member = next(info for info in archive.members if info.filename == "word/document.xml")
    with pytest.raises(PastRatio):
        archive.read(member, **BOUNDS)


def test_sizes_the_headers_lie_about_are_not_trusted():
    archive = BoundedZip(bombs.docx_lying_sizes(inflated_mb=12, claimed=1000), max_members=10)
    member = next(info for info in archive.members if info.filename == "word/document.xml")
    assert member.file_size == 1000
    with pytest.raises(PastRatio):
        archive.read(member, **BOUNDS)
    with pytest.raises(PastLimit):
        archive.read(member, limit=member.file_size, ratio=100, ratio_floor=1024 * 1024)


def test_a_stored_member_longer_than_declared_stops_at_the_limit():
    data = bytearray(zipped({"note.md": b"x" * 5000}, zipfile.ZIP_STORED))
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (100).to_bytes(4, "little")
    archive = BoundedZip(bytes(data), max_members=10)
    with pytest.raises(PastLimit):
        archive.read(archive.members[0], limit=archive.members[0].file_size, ratio=100, ratio_floor=0)


def test_every_byte_is_charged_to_the_shared_budget():
    data = zipped({"a.txt": b"a" * 60_000, "b.txt": b"b" * 60_000})
    budget = InflateBudget(100_000)
    archive = BoundedZip(data, max_members=10, budget=budget)
    archive.read(archive.members[0], **BOUNDS)
    with pytest.raises(PastBudget):
        archive.read(archive.members[1], **BOUNDS)
    assert budget.remaining < 0


def test_a_damaged_member_is_refused_as_damaged_not_as_a_python_error():
    data = bytearray(zipped({"a.txt": b"some text that compresses " * 200}))
    data[60:70] = b"\xff" * 10  # inside the deflated bytes
    archive = BoundedZip(bytes(data), max_members=10)
    with pytest.raises(MemberDamaged):
        archive.read(archive.members[0], **BOUNDS)


def test_a_member_whose_checksum_does_not_match_is_damaged():
    data = bytearray(zipped({"a.txt": b"checked"}, zipfile.ZIP_STORED))
    data[data.index(b"checked")] = ord("C")
    archive = BoundedZip(bytes(data), max_members=10)
    with pytest.raises(MemberDamaged, match="checksum"):
        archive.read(archive.members[0], **BOUNDS)


def test_encrypted_and_unknown_methods_are_named():
    data = bytearray(zipped({"a.txt": b"secret"}))
    data[6] |= 0x1  # the local header's flag: encrypted
    archive = BoundedZip(bytes(data), max_members=10)
    with pytest.raises(MemberEncrypted):
        archive.read(archive.members[0], **BOUNDS)
    archive = BoundedZip(zipped({"a.txt": b"bz" * 100}, zipfile.ZIP_BZIP2), max_members=10)
    with pytest.raises(UnknownMethod):
        archive.read(archive.members[0], **BOUNDS)


def test_not_a_zip_and_a_zip_cut_short_are_told_apart():
    with pytest.raises(NotAZip) as plain:
        BoundedZip(b"%PDF-1.7 not a zip", max_members=10)
    assert not plain.value.cut_short
    data = zipped({"a.txt": b"text " * 1000})
    with pytest.raises(NotAZip) as cut:
        BoundedZip(data[: len(data) // 2], max_members=10)
    assert cut.value.cut_short


def test_too_many_members_are_refused_before_the_directory_is_read():
    data = zipped({f"{i}.txt": b"" for i in range(30)})
    with pytest.raises(TooManyMembers) as caught:
        BoundedZip(data, max_members=20)
    assert caught.value.count == 30
    big_names = zipped({f"{i:0>2000}.txt": b"" for i in range(5)})
    with pytest.raises(DirectoryTooLarge):
        BoundedZip(big_names, max_members=5)


def test_the_caller_words_each_refusal():
    def word(refusal):
        return ValueError(f"worded: {type(refusal).__name__}")

    with pytest.raises(ValueError, match="worded: NotAZip"):
        BoundedZip(b"nothing", max_members=1, word=word)
