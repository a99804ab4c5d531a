"""A Kybernesis export as items: the zip (its manifest checked first, chat sessions, memories line by
line, and its originals opened on demand within the archive's bounds), or its memories.jsonl alone."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from core.text import TextError, parse_json
from portability.sources import reading
from portability.sources.items import (
    CHAT_SESSIONS_FILE,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST,
    MEMORIES_FILE,
    ORIGINALS_DIR,
    ImportSourceError,
    Item,
    Source,
)
from portability.sources.reading import BoundedZip, Capped, lines_of, unsafe_name


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
        if len(raw.rstrip(b"\r\n")) > reading.MAX_ENTRY_BYTES:
            yield Item(label, error=f"the line is over {reading.MAX_ENTRY_BYTES:,} bytes")
            continue
        if not raw.strip():
            continue
        try:
            record = parse_json(raw)
        except TextError as exc:
            yield Item(label, error=str(exc))
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


def open_export_zip(archive: BoundedZip, by_name: dict) -> Source:
    info = by_name[MANIFEST]
    if refusal := archive.refusal(info, 1024 * 1024):
        raise ImportSourceError(f"{MANIFEST}: {refusal}")
    try:
        manifest = check_manifest(parse_json(archive.read(info, 1024 * 1024)))
    except TextError as exc:
        raise ImportSourceError(f"{MANIFEST} is {exc}") from None
    source = Source(kind="export", manifest=manifest, total=_count(manifest, "memories"))
    if CHAT_SESSIONS_FILE in by_name:
        info = by_name[CHAT_SESSIONS_FILE]
        if refusal := archive.refusal(info):
            raise ImportSourceError(f"{CHAT_SESSIONS_FILE}: {refusal}")
        with archive.open_bounded(info, reading.MAX_ENTRY_BYTES) as stream:
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
    if refusal := archive.refusal(memories, reading.MAX_JSONL_BYTES):
        raise ImportSourceError(f"{MEMORIES_FILE}: {refusal}")

    def items():
        with archive.open_bounded(memories, reading.MAX_JSONL_BYTES) as stream:
            yield from _jsonl_items(stream, MEMORIES_FILE)

    source.items = items()
    return source


def _original_opener(archive: BoundedZip, by_name: dict) -> Callable[[str, int], Capped]:
    def open_original(entry: str, limit: int) -> Capped:
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
