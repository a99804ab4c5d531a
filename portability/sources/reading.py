"""Reading what an import is given within bounds: zip entries (a name that climbs out, a symlink, an
encrypted entry, a bomb, sizes the headers lie about), lines of any length, and an entry's time."""

from __future__ import annotations

import io
import re
import stat
import struct
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath

from memories.parsers.bounded_zip import BoundedZip as ZipReader
from memories.parsers.bounded_zip import (
    DirectoryTooLarge,
    MemberDamaged,
    MemberEncrypted,
    NotAZip,
    PastBudget,
    PastLimit,
    PastRatio,
    TooManyMembers,
    UnknownMethod,
    ZipRefusal,
)
from memories.parsers.budget import InflateBudget
from portability.sources.items import ImportSourceError

MAX_ENTRIES = 100_000
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # one note, or one line of an export's memories.jsonl (see lines_of)
MAX_JSONL_BYTES = 8 * 1024 * 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024 * 1024
MAX_RATIO = 200  # uncompressed : compressed, for entries over RATIO_FLOOR
RATIO_FLOOR = 1024 * 1024


def unsafe_name(name: str) -> str | None:
    """Why a member name must not be used, or None. Names are never joined to a path here, but an
    archive naming its way out of itself is refused outright as the attack it is."""
    if "\x00" in name or "\\" in name:
        return "its name holds a backslash or NUL"
    path = PurePosixPath(name)
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "its name is an absolute path"
    if ".." in path.parts:
        return "its name climbs out of the archive (..)"
    return None


class BoundedZip:
    """An import's zip, read by the one bounded reader (memories.parsers.bounded_zip) with an import's
    limits: its entries are refused first by what their headers declare (refusal), then read by their
    real bytes, never past their declared size, MAX_RATIO or the archive's MAX_TOTAL_BYTES."""

    def __init__(self, file):
        self.reader = ZipReader(file, max_members=MAX_ENTRIES, budget=InflateBudget(MAX_TOTAL_BYTES), word=_refused)
        self.infos = self.reader.members

    def refusal(self, info: zipfile.ZipInfo, limit: int = MAX_ENTRY_BYTES) -> str | None:
        if reason := unsafe_name(info.filename):
            return f"refused: {reason}"
        if stat.S_ISLNK(info.external_attr >> 16):
            return "refused: a symbolic link"
        if info.flag_bits & 0x1:
            return "refused: encrypted"
        if info.file_size > limit:
            return f"refused: {info.file_size:,} bytes uncompressed; the limit is {limit:,}"
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            return f"refused: it would inflate {info.file_size // max(info.compress_size, 1):,}-fold (a zip bomb?)"
        return None

    def open_bounded(self, info: zipfile.ZipInfo, limit: int) -> Capped:
        """The entry as a stream that stops with an error past its declared size or `limit`: the sizes
        in a zip's headers are the archive's word, not a fact."""
        raw = self.reader.open(info, limit=min(limit, info.file_size), ratio=MAX_RATIO, ratio_floor=RATIO_FLOOR)
        return Capped(io.BufferedReader(raw, buffer_size=1024 * 1024))

    def read(self, info: zipfile.ZipInfo, limit: int = MAX_ENTRY_BYTES) -> bytes:
        with self.open_bounded(info, limit) as stream:
            return stream.read()


def _refused(refusal: ZipRefusal) -> ImportSourceError:
    """The reader's refusal in an import's words."""
    if isinstance(refusal, NotAZip):
        return ImportSourceError(f"not a readable zip file: {refusal.detail}")
    if isinstance(refusal, TooManyMembers):
        return ImportSourceError(f"the zip has {refusal.count:,} entries; the limit is {refusal.limit:,}")
    if isinstance(refusal, DirectoryTooLarge):
        return ImportSourceError(f"the zip's directory takes {refusal.size:,} bytes; the limit is {refusal.limit:,}")
    if isinstance(refusal, PastLimit):
        return ImportSourceError(f"an entry inflates past the {refusal.limit:,} bytes it declares (a zip bomb?)")
    if isinstance(refusal, PastBudget):
        return ImportSourceError(f"the archive inflates past {refusal.total:,} bytes in all")
    if isinstance(refusal, PastRatio):
        return ImportSourceError(f"an entry inflates more than {refusal.ratio}-fold (a zip bomb?)")
    if isinstance(refusal, MemberEncrypted):
        return ImportSourceError("refused: encrypted")
    if isinstance(refusal, UnknownMethod):
        return ImportSourceError(f"an entry uses compression method {refusal.method}, which is not read")
    if isinstance(refusal, MemberDamaged):
        return ImportSourceError(f"an entry is damaged ({refusal.detail})")
    return ImportSourceError(f"the zip cannot be read ({refusal})")


class Capped:
    """An entry's stream whose lines are read bounded (see lines_of); the bounds on its bytes are the
    reader's."""

    def __init__(self, stream: io.BufferedReader):
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        return self.stream.read(-1 if size is None else size)

    def readline(self, size: int = -1) -> bytes:
        limit = MAX_ENTRY_BYTES + 1 if size is None or size < 0 else min(size, MAX_ENTRY_BYTES + 1)
        return self.stream.readline(limit)

    def __iter__(self):
        return lines_of(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stream.close()


def lines_of(stream, limit: int | None = None) -> Iterator[bytes]:
    """Each line of a binary stream, never more than limit + 1 bytes of it in memory (MAX_ENTRY_BYTES by
    default): a longer line is yielded as its first limit + 1 bytes, so the reader sees it is too long,
    and the rest of it is skipped, so it is one line however long it is (a plain file's own iteration
    would read it whole)."""
    limit = MAX_ENTRY_BYTES if limit is None else limit
    while line := stream.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := stream.readline(limit + 1)) and not rest.endswith(b"\n"):
                pass
        yield line


_EXTENDED_TIMESTAMP, _NTFS = 0x5455, 0x000A
_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)


def zip_time(info: zipfile.ZipInfo) -> datetime:
    """An entry's modification time. A zip's own field is the zipping machine's local time with no zone;
    Info-ZIP, macOS and most tools also write the exact time (UTC) in an extended-timestamp field, and
    Windows tools in an NTFS field, so one of those is used when present, the local time read as UTC
    otherwise."""
    try:
        if (exact := _extra_field_time(info.extra)) is not None:
            return exact
    except (struct.error, ValueError, OverflowError, OSError):
        pass
    try:
        return datetime(*info.date_time, tzinfo=UTC)
    except ValueError:
        return datetime(1980, 1, 1, tzinfo=UTC)


def _extra_field_time(extra: bytes) -> datetime | None:
    at = 0
    while at + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, at)
        data = extra[at + 4 : at + 4 + size]
        if tag == _EXTENDED_TIMESTAMP and len(data) >= 5 and data[0] & 1:  # flags; bit 0: mtime follows
            return datetime.fromtimestamp(struct.unpack_from("<I", data, 1)[0], tz=UTC)
        if tag == _NTFS and len(data) >= 4:  # 4 reserved bytes, then attributes; #1 is mtime, atime, ctime
            inner = 4
            while inner + 4 <= len(data):
                attribute, length = struct.unpack_from("<HH", data, inner)
                if attribute == 1 and length >= 8 and inner + 12 <= len(data):
                    ticks = struct.unpack_from("<Q", data, inner + 4)[0]  # 100 ns since 1601
                    return _FILETIME_EPOCH + timedelta(microseconds=ticks // 10)
                inner += 4 + length
        at += 4 + size
    return None
