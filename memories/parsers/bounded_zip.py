"""One reader for every zip, a document's (.docx, .xlsx, .epub...) or an import's: each member inflated by
its real bytes within a limit, a ratio and a shared budget, whatever sizes the archive declares. The
reader names the rule that refused; the caller words it for its person (DocumentArchive for parsers)."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, NoReturn

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import DecompressionBombError, ExtractionError

# A document's member may not inflate more than MAX_INFLATE_RATIO times its compressed bytes once past
# INFLATE_RATIO_FLOOR (text XML compresses about 5-20 times), besides the budget's absolute limit.
MAX_INFLATE_RATIO = 100
INFLATE_RATIO_FLOOR = 8 * 1024 * 1024
MAX_ZIP_MEMBERS = 5_000
# Generous for one central directory record (46 bytes, its name and extra fields): a directory larger
# than this many bytes per allowed member is refused before zipfile reads it whole.
_DIRECTORY_BYTES_PER_MEMBER = 1024
_STEP = 1 << 20  # at most this many bytes are inflated at a time, so the checks run before memory is taken


class ZipRefusal(Exception):
    """Why an archive or one of its members is not read; the subclass names the rule that refused."""


class NotAZip(ZipRefusal):
    def __init__(self, detail: str, *, cut_short: bool):
        super().__init__(detail)
        self.detail = detail
        self.cut_short = cut_short  # it starts as a zip does, but its directory is missing


class TooManyMembers(ZipRefusal):
    def __init__(self, count: int, limit: int):
        super().__init__(f"{count} members; the limit is {limit}")
        self.count, self.limit = count, limit


class DirectoryTooLarge(ZipRefusal):
    def __init__(self, size: int, limit: int):
        super().__init__(f"a directory of {size} bytes; at most {limit} are read")
        self.size, self.limit = size, limit


class MemberEncrypted(ZipRefusal):
    pass


class UnknownMethod(ZipRefusal):
    def __init__(self, method: int):
        super().__init__(f"compression method {method}")
        self.method = method


class MemberDamaged(ZipRefusal):
    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail  # "it has no valid header", "it is cut short", ...


class PastLimit(ZipRefusal):
    def __init__(self, limit: int):
        super().__init__(f"inflates past {limit} bytes")
        self.limit = limit


class PastRatio(ZipRefusal):
    def __init__(self, ratio: int, floor: int):
        super().__init__(f"inflates more than {ratio} times its compressed bytes")
        self.ratio, self.floor = ratio, floor


class PastBudget(ZipRefusal):
    def __init__(self, total: int):
        super().__init__(f"the budget of {total} bytes is spent")
        self.total = total


Source = bytes | bytearray | memoryview | str | Path | BinaryIO


class BoundedZip:
    """A zip read within bounds. Its directory is checked for size and member count before zipfile
    builds it; each member is then read from its local header on and inflated by its real bytes (the
    sizes the headers declare are not trusted), at most `limit` bytes, at most `ratio` times the
    compressed bytes read once past `ratio_floor`, and every byte is charged to `budget` (an archive's
    or a request's). A refusal is raised as `word(refusal)`: the caller's own error and message."""

    def __init__(
        self,
        source: Source,
        *,
        max_members: int,
        budget: InflateBudget | None = None,
        word: Callable[[ZipRefusal], Exception] | None = None,
    ):
        self._word = word or (lambda refusal: refusal)
        self.budget = budget
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._view: memoryview | None = memoryview(source)
            handle: BinaryIO = io.BytesIO(self._view)
        elif isinstance(source, (str, Path)):
            self._view = None
            try:
                handle = open(source, "rb")  # noqa: SIM115 - the archive owns it until closed
            except OSError as exc:
                self.fail(NotAZip(str(exc), cut_short=False))
        else:
            self._view, handle = None, source
        self._handle = handle
        self._check_directory(max_members)
        try:
            self.zip = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, NotImplementedError) as exc:
            self.fail(NotAZip(str(exc), cut_short=self._starts_as_zip()))
        infos = self.zip.infolist()
        if len(infos) > max_members:
            self.fail(TooManyMembers(len(infos), max_members))
        self.members = [info for info in infos if not info.is_dir()]

    def fail(self, refusal: ZipRefusal) -> NoReturn:
        raise self._word(refusal) from None

    def close(self) -> None:
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def open(self, info: zipfile.ZipInfo, *, limit: int, ratio: int, ratio_floor: int) -> MemberStream:
        """The member's bytes as a raw stream (wrap it in io.BufferedReader to read lines)."""
        return MemberStream(self, info, limit=limit, ratio=ratio, ratio_floor=ratio_floor)

    def read(self, info: zipfile.ZipInfo, *, limit: int, ratio: int, ratio_floor: int) -> bytes:
        with self.open(info, limit=limit, ratio=ratio, ratio_floor=ratio_floor) as stream:
            return stream.readall()

    def read_at(self, offset: int, size: int) -> bytes:
        if self._view is not None:
            return bytes(self._view[offset : offset + size])
        self._handle.seek(offset)
        return self._handle.read(size)

    def _length(self) -> int:
        if self._view is not None:
            return len(self._view)
        return self._handle.seek(0, io.SEEK_END)

    def _starts_as_zip(self) -> bool:
        return self.read_at(0, 4) == b"PK\x03\x04"

    def _check_directory(self, max_members: int) -> None:
        """Refuse an archive whose end record announces more members, or a larger directory, than any
        archive of max_members needs, before zipfile reads the directory whole into memory."""
        length = self._length()
        tail_at = max(0, length - (65535 + 22))
        tail = self.read_at(tail_at, length - tail_at)
        end = tail.rfind(b"PK\x05\x06")
        if end < 0 or end + 22 > len(tail):
            return  # zipfile says what is wrong
        count, directory_size = struct.unpack_from("<HI", tail, end + 10)
        locator = end - 20
        if locator >= 0 and tail[locator : locator + 4] == b"PK\x06\x07":
            (zip64_at,) = struct.unpack_from("<Q", tail, locator + 8)
            record = self.read_at(zip64_at, 56)
            if len(record) == 56 and record[:4] == b"PK\x06\x06":
                count, directory_size = struct.unpack_from("<QQ", record, 32)
        if count > max_members:
            self.fail(TooManyMembers(count, max_members))
        if directory_size > max_members * _DIRECTORY_BYTES_PER_MEMBER:
            self.fail(DirectoryTooLarge(directory_size, max_members * _DIRECTORY_BYTES_PER_MEMBER))


_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")


class MemberStream(io.RawIOBase):
    """One member's bytes, inflated as they are read and checked after every step (see BoundedZip)."""

    def __init__(self, archive: BoundedZip, info: zipfile.ZipInfo, *, limit: int, ratio: int, ratio_floor: int):
        super().__init__()
        self._archive, self._limit, self._ratio, self._floor = archive, limit, ratio, ratio_floor
        header = archive.read_at(info.header_offset, _LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            archive.fail(MemberDamaged("it has no valid header"))
        fields = _LOCAL_HEADER.unpack(header)
        flags, method, name_length, extra_length = fields[3], fields[4], fields[10], fields[11]
        if flags & 0x1 or info.flag_bits & 0x1:
            archive.fail(MemberEncrypted())
        if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            archive.fail(UnknownMethod(method))
        self._at = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        self._stored_left = info.compress_size if method == zipfile.ZIP_STORED else -1
        self._inflater = zlib.decompressobj(-zlib.MAX_WBITS) if method == zipfile.ZIP_DEFLATED else None
        self._pending = b""
        self._produced = self._consumed = 0
        self._crc, self._expected_crc = 0, info.CRC
        self._finished = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        piece = self._next(len(buffer))
        buffer[: len(piece)] = piece
        return len(piece)

    def readall(self) -> bytes:
        parts = []
        while piece := self._next(_STEP):
            parts.append(piece)
        return b"".join(parts)

    def _next(self, size: int) -> bytes:
        while size > 0 and not self._finished:
            piece = self._stored(size) if self._inflater is None else self._inflate(size)
            if piece:
                self._account(piece)
            if self._finished and self._crc != self._expected_crc:
                self._archive.fail(MemberDamaged("its checksum does not match its bytes"))
            if piece:
                return piece
        return b""

    def _stored(self, size: int) -> bytes:
        take = min(size, self._stored_left, _STEP, self._limit - self._produced + 1)
        if take <= 0:
            self._finished = True
            return b""
        piece = self._archive.read_at(self._at, take)
        if len(piece) < take:
            self._archive.fail(MemberDamaged("it is cut short"))
        self._at += take
        self._stored_left -= take
        self._consumed += take
        return piece

    def _inflate(self, size: int) -> bytes:
        assert self._inflater is not None
        if not self._pending:
            self._pending = self._archive.read_at(self._at, 65536)
            self._at += len(self._pending)
        fed = len(self._pending)
        try:
            piece = self._inflater.decompress(self._pending, min(size, _STEP, self._limit - self._produced + 1))
        except zlib.error:
            self._archive.fail(MemberDamaged("it cannot be decompressed"))
        self._pending = self._inflater.unconsumed_tail
        self._consumed += fed - len(self._pending)
        if self._inflater.eof:
            self._finished = True
        elif not fed and not piece:
            self._archive.fail(MemberDamaged("it is cut short"))
        return piece

    def _account(self, piece: bytes) -> None:
        self._produced += len(piece)
        self._crc = zlib.crc32(piece, self._crc)
        budget = self._archive.budget
        if budget is not None:
            budget.charge(len(piece))  # refused members count too: many bombs cannot add up
        if self._produced > self._limit:
            self._archive.fail(PastLimit(self._limit))
        if budget is not None and budget.remaining < 0:
            self._archive.fail(PastBudget(budget.total))
        if self._produced > self._floor and self._produced > self._ratio * max(1, self._consumed):
            self._archive.fail(PastRatio(self._ratio, self._floor))


class DocumentArchive:
    """A document's zip (a .docx, .pptx, .xlsx, OpenDocument file or EPUB), read within the file's
    decompression limit: members read whole by name, or the archive rebuilt stored for a library that
    opens the zip itself. `what` names the format in messages (".docx")."""

    def __init__(self, data: bytes, *, what: str, budget: InflateBudget, max_inflated: int):
        self.what, self._budget, self._per_file = what, budget, max_inflated
        self._limit = budget.file_limit(max_inflated)
        self._produced = 0
        self._zip = BoundedZip(data, max_members=MAX_ZIP_MEMBERS, budget=budget, word=self._words(data))
        self.members = {info.filename: info for info in self._zip.members}
        self._folded = {name.lower(): name for name in reversed(self.members)}

    def find(self, name: str) -> str | None:
        """The member's name as the archive spells it (names are matched without regard to case, as
        Office does), or None."""
        return name if name in self.members else self._folded.get(name.lower())

    def read(self, name: str) -> bytes | None:
        """A member's bytes, or None when the archive has no such member."""
        found = self.find(name)
        if found is None:
            return None
        info = self.members[found]
        content = self._zip.read(
            info, limit=self._limit - self._produced, ratio=MAX_INFLATE_RATIO, ratio_floor=INFLATE_RATIO_FLOOR
        )
        self._produced += len(content)
        return content

    def stored_copy(
        self, *, keep: Callable[[str], bool] = lambda name: True, rewrite: Callable[[bytes], bytes] | None = None
    ) -> bytes:
        """The archive rebuilt as a stored (uncompressed) zip of inflated members, for a library that
        opens the zip itself (zipfile would inflate a member whole before checking the size it declares,
        and that size can lie). Members `keep` declines (images, for one) are written empty, never
        inflated; `rewrite` may change the bytes of those kept."""
        safe = io.BytesIO()
        with zipfile.ZipFile(safe, "w", zipfile.ZIP_STORED) as rebuilt:
            for name in self.members:
                content = self.read(name) if keep(name) else b""
                rebuilt.writestr(name, rewrite(content) if rewrite and content else content or b"")
        return safe.getvalue()

    def _words(self, data: bytes) -> Callable[[ZipRefusal], Exception]:
        what = self.what

        def word(refusal: ZipRefusal) -> Exception:
            if isinstance(refusal, NotAZip):
                if refusal.cut_short:
                    return ExtractionError(f"this {what} is damaged or cut short (its zip directory is missing)")
                looks = content_kind(data)
                return ExtractionError(
                    f"this is not a valid {what} file (it is not a zip archive"
                    + (f"; it looks like {looks}" if looks else "")
                    + ")"
                )
            if isinstance(refusal, TooManyMembers):
                return ExtractionError(f"the {what} holds {refusal.count:,} files; at most {refusal.limit:,} are read")
            if isinstance(refusal, DirectoryTooLarge):
                return ExtractionError(
                    f"the {what}'s list of files takes {refusal.size:,} bytes; at most {refusal.limit:,} are read"
                )
            if isinstance(refusal, MemberEncrypted):
                return ExtractionError(f"the {what} is password-protected (its parts are encrypted) and cannot be read")
            if isinstance(refusal, UnknownMethod):
                return ExtractionError(f"the {what} uses a compression method other than deflate, which is not read")
            if isinstance(refusal, MemberDamaged):
                return ExtractionError(f"this {what} is damaged (a file inside it: {refusal.detail})")
            if isinstance(refusal, PastRatio):
                return DecompressionBombError(
                    f"a file inside this {what} inflates more than {refusal.ratio} times "
                    "its compressed size, which is refused as a likely zip bomb"
                )
            return self._budget.refuse(f"this {what}", self._per_file)  # PastLimit, PastBudget

        return word


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", "a PDF document"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an older Microsoft Office file"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"{\\rtf", "an RTF document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"MZ", "a Windows program"),
    (b"\x7fELF", "a Linux program"),
)


def content_kind(data: bytes) -> str | None:
    """What a file that is not the zip its name says looks like, for the message ("a PDF document")."""
    head = data[:1024].lstrip()
    for magic, kind in _MAGIC:
        if head.startswith(magic) or (magic == b"%PDF" and magic in head):
            return kind
    lowered = head[:256].lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "an HTML page"
    text = head.decode("utf-8", "ignore")
    if head and b"\x00" not in head and len(text) * 4 >= len(head) * 3:
        controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t")
        if controls * 50 <= len(text):
            return "plain text"
    return None
