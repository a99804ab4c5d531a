"""Markdown notes as items (an Obsidian vault, zipped or a folder): YAML front matter, whose tags become
manual tags; [[wikilinks]], kept for the graph to link; and each file's time."""

from __future__ import annotations

import re
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath

import yaml

from portability.sources import reading
from portability.sources.items import MANIFEST, MARKDOWN_SUFFIXES, ImportSourceError, Item, Source
from portability.sources.reading import BoundedZip, unsafe_name, zip_time

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_WIKILINK = re.compile(r"(?<!!)\[\[([^\[\]|#^]+)(?:[#^][^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")


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
        except RecursionError:
            return Item(label, error="the front matter is nested too deeply to read")
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


def open_markdown_zip(archive: BoundedZip) -> Source:
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
            yield markdown_item(info.filename, data, zip_time(info))

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

    return Source(
        kind="markdown", items=(note_file(p, p.relative_to(root).as_posix()) for p in notes), total=len(notes)
    )


def open_note(path: Path, name: str) -> Source:
    """One note on its own (an uploaded .md)."""
    return Source(kind="markdown", items=iter([note_file(path, name)]), total=1)


def note_file(path: Path, label: str) -> Item:
    """A note on disk, refused unread when it is over the limit, with the file's time."""
    status = path.stat()
    if status.st_size > reading.MAX_ENTRY_BYTES:
        return Item(label, error=f"refused: {status.st_size:,} bytes; the limit is {reading.MAX_ENTRY_BYTES:,}")
    return markdown_item(label, path.read_bytes(), datetime.fromtimestamp(status.st_mtime, tz=UTC))
