"""Reading what people bring to an import: a Kybernesis export (zip or its memories.jsonl), or a folder
or zip of Markdown notes (an Obsidian vault). Yields one item per memory, or a per-item error.

Nothing here writes: memories.services.portability turns the records into memories. Archives are read with
bounds, so a zip bomb or an entry named `../../etc/passwd` becomes an error for that entry only.
"""

from __future__ import annotations

import json
import re
import stat
import struct
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path, PurePosixPath

import yaml

FORMAT_NAME = "kybernesis-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MEMORIES_FILE = "memories.jsonl"
CHAT_SESSIONS_FILE = "chat_sessions.jsonl"
ORIGINALS_DIR = "originals/"

MAX_ENTRIES = 100_000
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # one note, or one export's memories.jsonl line by line (see _lines)
MAX_JSONL_BYTES = 8 * 1024 * 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024 * 1024
MAX_RATIO = 200  # uncompressed : compressed, for entries over 1 MB
MARKDOWN_SUFFIXES = (".md", ".markdown")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_WIKILINK = re.compile(r"(?<!!)\[\[([^\[\]|#^]+)(?:[#^][^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")


class ImportSourceError(ValueError):
    """The whole source cannot be read (not a zip, unknown manifest version, nothing importable)."""


@dataclass
class Item:
    """One memory to import (`record`, in the export format) or why it cannot be (`error`)."""

    label: str
    record: dict | None = None
    error: str | None = None


@dataclass
class Source:
    kind: str  # "export" or "markdown"
    manifest: dict = field(default_factory=dict)
    chat_sessions: list[Item] = field(default_factory=list)  # one per chat_sessions.jsonl line, or its error
    errors: list[Item] = field(default_factory=list)  # entries refused before any memory is read
    items: Iterator[Item] = field(default_factory=lambda: iter(()))
    total: int | None = None  # how many items, when known up front
    # An export zip's originals: open_original(entry, limit) is a bounded stream of one originals/ entry.
    open_original: Callable[[str, int], _Capped] | None = None


# --- Safe archive access -------------------------------------------------------------------------


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


class _BoundedZip:
    """A zip whose entries are read with limits on size, ratio and the archive's total."""

    def __init__(self, file):
        try:
            self.zip = zipfile.ZipFile(file)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ImportSourceError(f"not a readable zip file: {exc}") from None
        infos = self.zip.infolist()
        if len(infos) > MAX_ENTRIES:
            raise ImportSourceError(f"the zip has {len(infos):,} entries; the limit is {MAX_ENTRIES:,}")
        self.infos = [i for i in infos if not i.is_dir()]
        self.read_total = 0

    def refusal(self, info: zipfile.ZipInfo, limit: int = MAX_ENTRY_BYTES) -> str | None:
        if reason := unsafe_name(info.filename):
            return f"refused: {reason}"
        if stat.S_ISLNK(info.external_attr >> 16):
            return "refused: a symbolic link"
        if info.flag_bits & 0x1:
            return "refused: encrypted"
        if info.file_size > limit:
            return f"refused: {info.file_size:,} bytes uncompressed; the limit is {limit:,}"
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            return f"refused: it would inflate {info.file_size // max(info.compress_size, 1):,}-fold (a zip bomb?)"
        return None

    def open_bounded(self, info: zipfile.ZipInfo, limit: int):
        """The entry as a stream that stops with an error past its declared size or `limit`: the sizes
        in a zip's headers are the archive's word, not a fact."""
        return _Capped(self.zip.open(info), min(limit, info.file_size), self)

    def read(self, info: zipfile.ZipInfo, limit: int = MAX_ENTRY_BYTES) -> bytes:
        with self.open_bounded(info, limit) as stream:
            return stream.read()


class _Capped:
    def __init__(self, raw, limit: int, owner: _BoundedZip):
        self.raw, self.limit, self.owner, self.count = raw, limit, owner, 0

    def _take(self, data: bytes) -> bytes:
        self.count += len(data)
        self.owner.read_total += len(data)
        if self.count > self.limit:
            raise ImportSourceError(f"an entry inflates past the {self.limit:,} bytes it declares (a zip bomb?)")
        if self.owner.read_total > MAX_TOTAL_BYTES:
            raise ImportSourceError(f"the archive inflates past {MAX_TOTAL_BYTES:,} bytes in all")
        return data

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            out = bytearray()
            while chunk := self.raw.read(1024 * 1024):
                out += self._take(chunk)
            return bytes(out)
        return self._take(self.raw.read(size))

    def readline(self, size: int = -1) -> bytes:
        limit = MAX_ENTRY_BYTES + 1 if size is None or size < 0 else min(size, MAX_ENTRY_BYTES + 1)
        return self._take(self.raw.readline(limit))

    def __iter__(self):
        return lines_of(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.raw.close()


# --- Records from an export ----------------------------------------------------------------------


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


def check_manifest(manifest) -> dict:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ImportSourceError(f"{MANIFEST} is not a Kybernesis export manifest")
    version = manifest.get("formatVersion")
    if version != FORMAT_VERSION:
        raise ImportSourceError(
            f"{MANIFEST}: format version {version!r} is not supported; this Kybernesis reads version {FORMAT_VERSION}"
        )
    return manifest


def _jsonl_items(lines: Iterable[bytes], name: str) -> Iterator[Item]:
    for number, raw in enumerate(lines, start=1):
        label = f"{name} line {number}"
        if len(raw.rstrip(b"\r\n")) > MAX_ENTRY_BYTES:
            yield Item(label, error=f"the line is over {MAX_ENTRY_BYTES:,} bytes")
            continue
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            yield Item(label, error=f"not valid JSON: {exc}")
            continue
        if not isinstance(record, dict):
            yield Item(label, error="each line must be a JSON object (one memory)")
            continue
        yield Item(label, record=record)


def open_jsonl(path: Path, name: str = "") -> Source:
    """A bare memories.jsonl in the export format (no manifest: vectors are not reused). Items are
    labelled with `name`, the file's name as its owner knows it (an upload is kept under another)."""

    def items():
        with open(path, "rb") as handle:
            yield from _jsonl_items(lines_of(handle), name or path.name)

    return Source(kind="export", items=items())


def _count(manifest: dict, name: str) -> int | None:
    """One of the manifest's counts, for the progress bar only: anything but a whole number is unknown."""
    counts = manifest.get("counts")
    value = counts.get(name) if isinstance(counts, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _open_export_zip(archive: _BoundedZip, by_name: dict) -> Source:
    info = by_name[MANIFEST]
    if refusal := archive.refusal(info, 1024 * 1024):
        raise ImportSourceError(f"{MANIFEST}: {refusal}")
    try:
        manifest = check_manifest(json.loads(archive.read(info, 1024 * 1024)))
    except ValueError as exc:
        if isinstance(exc, ImportSourceError):
            raise
        raise ImportSourceError(f"{MANIFEST} is not valid JSON: {exc}") from None
    source = Source(kind="export", manifest=manifest, total=_count(manifest, "memories"))
    if CHAT_SESSIONS_FILE in by_name:
        info = by_name[CHAT_SESSIONS_FILE]
        if refusal := archive.refusal(info):
            raise ImportSourceError(f"{CHAT_SESSIONS_FILE}: {refusal}")
        with archive.open_bounded(info, MAX_ENTRY_BYTES) as stream:
            source.chat_sessions = list(_jsonl_items(stream, CHAT_SESSIONS_FILE))
    for info in archive.infos:
        if info.filename not in (MANIFEST, MEMORIES_FILE, CHAT_SESSIONS_FILE) and (
            reason := unsafe_name(info.filename)
        ):
            source.errors.append(Item(info.filename, error=f"refused: {reason}"))
    source.open_original = _original_opener(archive, by_name)
    memories = by_name.get(MEMORIES_FILE)
    if memories is None:
        raise ImportSourceError(f"the export has no {MEMORIES_FILE}")
    if refusal := archive.refusal(memories, MAX_JSONL_BYTES):
        raise ImportSourceError(f"{MEMORIES_FILE}: {refusal}")

    def items():
        with archive.open_bounded(memories, MAX_JSONL_BYTES) as stream:
            yield from _jsonl_items(stream, MEMORIES_FILE)

    source.items = items()
    return source


def _original_opener(archive: _BoundedZip, by_name: dict) -> Callable[[str, int], _Capped]:
    def open_original(entry: str, limit: int) -> _Capped:
        """One original's bytes, read with the archive's bounds; ImportSourceError says why not."""
        if not isinstance(entry, str) or not entry.startswith(ORIGINALS_DIR) or "/" in entry[len(ORIGINALS_DIR) :]:
            raise ImportSourceError(f"original: {entry!r} is not a file directly under {ORIGINALS_DIR}")
        if reason := unsafe_name(entry):
            raise ImportSourceError(f"original {entry}: refused: {reason}")
        info = by_name.get(entry)
        if info is None:
            raise ImportSourceError(f"original {entry} is not in the zip")
        if refusal := archive.refusal(info, limit):
            raise ImportSourceError(f"original {entry}: {refusal}")
        return archive.open_bounded(info, limit)

    return open_original


# --- Markdown notes (an Obsidian vault) ----------------------------------------------------------


def _yaml_safe(value):
    """Front matter values as JSON: YAML dates become ISO strings."""
    if isinstance(value, dict):
        return {str(k): _yaml_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_yaml_safe(v) for v in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _tags_from(value) -> list[str]:
    """Obsidian's `tags:` as a list or as one string of comma- or space-separated tags; '#' dropped."""
    if value is None:
        return []
    if isinstance(value, dict):
        raise ValueError("the front matter's tags are a mapping; give a list of tags or one line of them")
    parts = value if isinstance(value, list) else re.split(r"[,\s]+", str(value))
    if any(isinstance(p, (dict, list)) for p in parts):
        raise ValueError("the front matter's tags hold a mapping or a list; each tag must be a word")
    return [str(p).strip().lstrip("#") for p in parts if str(p).strip().lstrip("#")]


def _when(value) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def markdown_item(label: str, data: bytes, modified: datetime) -> Item:
    """One note as a record: front-matter tags become manual tags, [[wikilinks]] are kept in
    metadata["wikilinks"] for the graph to link, and the file's time becomes the memory's."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Item(label, error=f"not UTF-8 text (byte {exc.start}); save the note as UTF-8")
    front: dict = {}
    if match := _FRONT_MATTER.match(text):
        try:
            loaded = yaml.safe_load(match.group(1))
        except yaml.YAMLError as exc:
            problem = " ".join(str(exc).split())
            return Item(label, error=f"the front matter is not YAML: {problem}")
        if loaded is not None and not isinstance(loaded, dict):
            return Item(label, error="the front matter is not a YAML mapping of keys to values")
        front = loaded or {}
        text = text[match.end() :]
    stem = PurePosixPath(label).stem
    title = front.pop("title", None)
    try:
        tags = _tags_from(front.pop("tags", None)) + _tags_from(front.pop("tag", None))
    except ValueError as exc:
        return Item(label, error=str(exc))
    created = _when(front.get("created")) or _when(front.get("date")) or modified
    metadata = {"path": label}
    if front:
        metadata["frontMatter"] = _yaml_safe(front)
    links = list(dict.fromkeys(m.group(1).strip() for m in _WIKILINK.finditer(text) if m.group(1).strip()))
    if links:
        metadata["wikilinks"] = links
    record = {
        "title": str(title) if title is not None else stem,
        "content": text,
        "source": "upload",
        "metadata": metadata,
        "manualTags": tags,
        "createdAt": created.isoformat(),
        "updatedAt": modified.isoformat(),
    }
    return Item(label, record=record)


_EXTENDED_TIMESTAMP, _NTFS = 0x5455, 0x000A
_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)


def _zip_time(info: zipfile.ZipInfo) -> datetime:
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


def _open_markdown_zip(archive: _BoundedZip) -> Source:
    source = Source(kind="markdown")
    notes = []
    for info in archive.infos:
        name = info.filename
        if reason := unsafe_name(name):
            source.errors.append(Item(name, error=f"refused: {reason}"))
        elif any(part.startswith(".") for part in PurePosixPath(name).parts):  # .obsidian/, .trash/
            continue
        elif name.lower().endswith(MARKDOWN_SUFFIXES):
            notes.append(info)
    if not notes and not source.errors:
        raise ImportSourceError(f"the zip holds neither a {MANIFEST} nor any Markdown (.md) notes")
    source.total = len(notes)

    def items():
        for info in notes:
            if refusal := archive.refusal(info):
                yield Item(info.filename, error=refusal)
                continue
            try:
                data = archive.read(info)
            except (ImportSourceError, zipfile.BadZipFile, OSError, EOFError) as exc:
                yield Item(info.filename, error=f"refused: {exc}")
                continue
            yield markdown_item(info.filename, data, _zip_time(info))

    source.items = items()
    return source


def open_folder(root: Path) -> Source:
    """A vault on disk (the command line's import): every .md below root, symlinks not followed."""
    notes = sorted(
        p
        for p in root.rglob("*")
        if p.suffix.lower() in MARKDOWN_SUFFIXES
        and p.is_file()
        and not p.is_symlink()
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not notes:
        raise ImportSourceError(f"{root} holds no Markdown (.md) notes")

    def items():
        for path in notes:
            label = path.relative_to(root).as_posix()
            size = path.stat().st_size
            if size > MAX_ENTRY_BYTES:
                yield Item(label, error=f"refused: {size:,} bytes; the limit is {MAX_ENTRY_BYTES:,}")
                continue
            modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
            yield markdown_item(label, path.read_bytes(), modified)

    return Source(kind="markdown", items=items(), total=len(notes))


def open_source(path: Path, name: str = "") -> Source:
    """What an import reads, by its shape: a folder, a .jsonl file, or a zip (export or notes)."""
    name = name or path.name
    if path.is_dir():
        if (path / MANIFEST).exists() or (path / MEMORIES_FILE).exists():
            raise ImportSourceError("an unpacked export: import the zip, or its memories.jsonl")
        return open_folder(path)
    if name.lower().endswith(".jsonl"):
        return open_jsonl(path, name)
    if name.lower().endswith(MARKDOWN_SUFFIXES):
        modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        return Source(
            kind="markdown",
            items=iter([markdown_item(name, path.read_bytes()[: MAX_ENTRY_BYTES + 1], modified)]),
            total=1,
        )
    archive = _BoundedZip(path)
    by_name = {info.filename: info for info in archive.infos}
    if MANIFEST in by_name:
        return _open_export_zip(archive, by_name)
    return _open_markdown_zip(archive)
