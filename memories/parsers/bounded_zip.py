"""Zip archives (a .docx is one) read within the decompression budget, whatever sizes they declare."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import DecompressionBombError, ExtractionError

# A zip member may not inflate more than MAX_INFLATE_RATIO times its compressed bytes once past
# INFLATE_RATIO_FLOOR (text XML compresses about 5-20 times), besides the budget's absolute limit.
MAX_INFLATE_RATIO = 100
INFLATE_RATIO_FLOOR = 8 * 1024 * 1024
MAX_ZIP_MEMBERS = 5_000


def inflated_copy(data: bytes, *, what: str, required: str, budget: InflateBudget, max_inflated: int) -> bytes:
    """The archive rebuilt as a stored (uncompressed) zip, every member inflated by its real bytes and
    within the budget (zipfile would inflate a member whole before checking it against the size the
    archive declares, and that size can lie). `what` names the format in messages (".docx"), and
    `required` is a member it must hold ("word/document.xml")."""
    limit = budget.file_limit(max_inflated)
    safe = io.BytesIO()
    produced = 0
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise ExtractionError(f"this is not a valid {what} file (it is not a zip archive)") from exc
    with archive, zipfile.ZipFile(safe, "w", zipfile.ZIP_STORED) as rebuilt:
        members = archive.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise ExtractionError(f"the {what} holds {len(members):,} files; at most {MAX_ZIP_MEMBERS:,} are read")
        if required not in {info.filename for info in members}:
            raise ExtractionError(f"this is not a valid {what} file (no {required} inside)")
        for info in members:
            if info.is_dir():
                continue
            content = _member(data, info, what=what, limit=limit - produced, budget=budget, per_file=max_inflated)
            produced += len(content)
            rebuilt.writestr(info.filename, content)
    return safe.getvalue()


_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")


def _member(
    data: bytes, info: zipfile.ZipInfo, *, what: str, limit: int, budget: InflateBudget, per_file: int
) -> bytes:
    """One zip member's bytes, read from its local header on and inflated with a byte budget: at most
    `limit` bytes out, and at most MAX_INFLATE_RATIO times the compressed bytes read once past
    INFLATE_RATIO_FLOOR. The sizes in the headers are not trusted for anything."""
    start = info.header_offset
    header = data[start : start + _LOCAL_HEADER.size]
    if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise ExtractionError(f"this {what} is damaged (a file inside it has no valid header)")
    fields = _LOCAL_HEADER.unpack(header)
    flags, method, name_length, extra_length = fields[3], fields[4], fields[10], fields[11]
    if flags & 0x1:
        raise ExtractionError(f"the {what} is encrypted")
    offset = start + _LOCAL_HEADER.size + name_length + extra_length
    if method == zipfile.ZIP_STORED:
        size = min(info.compress_size, max(0, len(data) - offset))
        budget.charge(min(size, limit + 1))
        if size > limit:
            raise budget.refuse(f"this {what}", per_file)
        return data[offset : offset + size]
    if method != zipfile.ZIP_DEFLATED:
        raise ExtractionError(f"the {what} uses a compression method other than deflate, which is not read")
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    parts: list[bytes] = []
    produced = consumed = 0
    position = offset
    pending = b""
    while not inflater.eof:
        if not pending:
            if position >= len(data):
                raise ExtractionError(f"this {what} is damaged (a file inside it is cut short)")
            pending = data[position : position + 65536]
            position += len(pending)
            consumed += len(pending)
        try:
            # At most 1 MB per step, so the checks below run before much memory is taken.
            piece = inflater.decompress(pending, min(1 << 20, limit - produced + 1))
        except zlib.error as exc:
            raise ExtractionError(f"this {what} is damaged (a file inside it cannot be decompressed)") from exc
        pending = inflater.unconsumed_tail
        produced += len(piece)
        budget.charge(len(piece))  # refused files count too: many bombs cannot add up
        if produced > limit:
            raise budget.refuse(f"this {what}", per_file)
        if produced > INFLATE_RATIO_FLOOR and produced > MAX_INFLATE_RATIO * (consumed - len(pending)):
            raise DecompressionBombError(
                f"a file inside this {what} inflates more than {MAX_INFLATE_RATIO} times "
                "its compressed size, which is refused as a likely zip bomb"
            )
        parts.append(piece)
    return b"".join(parts)
