"""Legacy Word .doc: read by the antiword program, when the server has it, as UTF-8; the 8-bit text of a
Word 6 or 95 file recoded from the code page its fonts declare (antiword reads it as Windows-1252)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from collections import Counter

from memories.parsers import ole
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.titles import declared_title

ANTIWORD_TIMEOUT_S = 60
PASSWORD_PROTECTED = "this .doc is password-protected and cannot be read; save a copy without the password"
_OTHER_FILES = (
    ("workbook", "an Excel .xls workbook"),
    ("book", "an Excel .xls workbook"),
    ("powerpoint document", "a PowerPoint .ppt presentation"),
)
# A font's character set (Windows' *_CHARSET) -> the code page of text written in it.
CHARSET_CODEPAGES = {
    128: "cp932",
    129: "cp949",
    134: "gbk",
    136: "cp950",
    161: "cp1253",
    162: "cp1254",
    163: "cp1258",
    177: "cp1255",
    178: "cp1256",
    186: "cp1257",
    204: "cp1251",
    222: "cp874",
    238: "cp1250",
}
_WORD_6_OR_95 = range(101, 193)  # nFib: 101 is Word 6, 104 Word 95, 193 Word 97 (Unicode text from then on)


def antiword_available() -> bool:
    return shutil.which("antiword") is not None


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    if not ole.is_ole(data):
        raise ExtractionError("this is not a legacy Word .doc file")
    names = ole.stream_names(data)
    if ole.is_encrypted_office(names):
        raise ExtractionError(PASSWORD_PROTECTED)
    if names and "worddocument" not in names:
        kind = next((kind for stream, kind in _OTHER_FILES if stream in names), "another kind of Office file")
        raise ExtractionError(f"this is not a Word .doc file: it is {kind}, which is not read")
    stream = _word_stream(data)
    n_fib, flags = struct.unpack_from("<2xH6xH", stream, 0) if len(stream) >= 12 else (0, 0)
    if flags & 0x0100:  # the FIB's fEncrypted
        raise ExtractionError(PASSWORD_PROTECTED)
    if not antiword_available():
        raise ExtractionError(
            "legacy Word .doc files need the 'antiword' program, which is not installed "
            "on this server (apt-get install antiword); save it as .docx instead"
        )
    try:
        done = subprocess.run(
            ["antiword", "-m", "UTF-8.txt", "-w", "0", "-"],
            input=data,
            capture_output=True,
            timeout=ANTIWORD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ExtractionError("reading the .doc file took too long") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        if reason and "encrypted" in reason[0].lower():
            raise ExtractionError(PASSWORD_PROTECTED)
        raise ExtractionError("the .doc file cannot be read" + (f": {_worded(reason[0])}" if reason else ""))
    text = done.stdout.decode("utf-8", "replace")
    codepage = legacy_codepage(stream) if n_fib in _WORD_6_OR_95 else None
    return Parsed(text=recode(text, codepage) if codepage else text, title=_summary_title(data))


def _summary_title(data: bytes) -> str | None:
    """The title in the file's summary information (File > Properties), when it is a real one."""
    reader = ole.open_ole(data)
    if reader is None:
        return None
    try:
        meta = reader.get_metadata()
        raw, codepage = meta.title, meta.codepage
    except Exception:  # noqa: BLE001 - a damaged property stream only costs the title
        return None
    finally:
        reader.close()
    if isinstance(raw, bytes):
        encoding = "utf-8" if codepage == 65001 else f"cp{codepage}" if codepage else "cp1252"
        try:
            raw = raw.decode(encoding, "replace")
        except LookupError:
            raw = raw.decode("cp1252", "replace")
    return declared_title(raw.rstrip("\x00") if isinstance(raw, str) else None)


def _worded(reason: str) -> str:
    """antiword's message, with the "-" it names standard input by, and the one it gives for a document
    too short for it (its text is kept in the file's small-stream area, which antiword does not read)."""
    if "too small to handle" in reason:
        return "antiword cannot read a document this short; save it as .docx instead"
    if reason.startswith("- "):
        return "the file " + reason[2:].rstrip(".").replace("Word Document", "Word document")
    return reason


def _word_stream(data: bytes) -> bytes:
    """The WordDocument stream, which starts with the file information block (FIB)."""
    reader = ole.open_ole(data)
    if reader is None:
        return b""
    try:
        with reader.openstream("WordDocument") as stream:
            return stream.read()
    except Exception:  # noqa: BLE001 - olefile raises many kinds on a damaged file; antiword then says why
        return b""
    finally:
        reader.close()


def legacy_codepage(stream: bytes) -> str | None:
    """The code page of a Word 6 or 95 file's 8-bit text: the one its fonts declare most often, when
    that is not Windows-1252 (the FIB's language does not say: a Russian file may declare English)."""
    if len(stream) < 0xD8:
        return None
    offset, length = struct.unpack_from("<II", stream, 0xD0)  # the font table (STTBFFFN) in Word 6 and 95
    table = stream[offset : offset + min(length, 65536)]
    charsets: Counter[int] = Counter()
    at = 2  # after the table's own length
    while at + 6 <= len(table):
        size = table[at] + 1  # cbFfnM1: the entry's length less one
        charsets[table[at + 4]] += 1  # chs, after the flags byte and the weight
        at += size
    declared = [charset for charset, _ in charsets.most_common() if charset in CHARSET_CODEPAGES]
    return CHARSET_CODEPAGES[declared[0]] if declared else None


def _windows_1252() -> dict[str, int]:
    """Each character Windows-1252 reads a byte as (Latin-1's for the five bytes it leaves undefined)."""
    table = {}
    for byte in range(256):
        try:
            table[bytes([byte]).decode("cp1252")] = byte
        except UnicodeDecodeError:
            table[chr(byte)] = byte
    return table


_BYTES_OF = _windows_1252()
_ONE_BYTE_RUN = re.compile("[" + "".join(re.escape(ch) for ch in _BYTES_OF) + "]+")


def recode(text: str, codepage: str) -> str:
    """Text read as Windows-1252 from bytes written in `codepage`, read again in it ("Êîìïàíèÿ" ->
    "Компания"). Each run of characters that stand for bytes is turned back into those bytes and
    decoded anew (a double-byte code page needs the whole run); anything else antiword wrote is kept."""

    def again(match: re.Match) -> str:
        run = match.group(0)
        if run.isascii():
            return run
        return bytes(_BYTES_OF[ch] for ch in run).decode(codepage, "replace")

    return _ONE_BYTE_RUN.sub(again, text)


FORMAT = Format(extensions=frozenset({"doc"}), parse=parse, media_types={"doc": "application/msword"})
