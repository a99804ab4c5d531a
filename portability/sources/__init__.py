"""Reading what people bring to an import: a Kybernesis export (zip or its memories.jsonl), a folder
or zip of Markdown notes (an Obsidian vault), or mail (an mbox, an .eml). Yields one item per memory, or a per-item error.

Nothing here writes: portability.services turns the records into memories. Archives are read with
bounds, so a zip bomb or an entry named `../../etc/passwd` becomes an error for that entry only. By concern:
items (what a source gives), reading (zips and lines within bounds), export, notes and mail (the formats).
"""

from __future__ import annotations

from pathlib import Path

from memories.parsers.mail import looks_like_mail
from portability.sources.export import check_manifest, open_export_zip, open_jsonl
from portability.sources.items import (
    CHAT_SESSIONS_FILE,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST,
    MARKDOWN_SUFFIXES,
    MEMORIES_FILE,
    ORIGINALS_DIR,
    ImportSourceError,
    Item,
    Source,
)
from portability.sources.mail import EML_SUFFIXES, MBOX_SUFFIXES, looks_like_mbox, open_eml, open_mbox
from portability.sources.notes import markdown_item, open_folder, open_markdown_zip, open_note
from portability.sources.reading import BoundedZip, lines_of, unsafe_name

__all__ = [
    "CHAT_SESSIONS_FILE",
    "EML_SUFFIXES",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST",
    "MARKDOWN_SUFFIXES",
    "MBOX_SUFFIXES",
    "MEMORIES_FILE",
    "ORIGINALS_DIR",
    "ImportSourceError",
    "Item",
    "Source",
    "check_manifest",
    "lines_of",
    "markdown_item",
    "open_eml",
    "open_folder",
    "open_jsonl",
    "open_mbox",
    "open_source",
    "unsafe_name",
]


def _mail_head(path: Path) -> bool:
    """An mbox or a mail whatever its name (Thunderbird's folders have none: "Inbox", "Sent")."""
    with open(path, "rb") as handle:
        head = handle.read(65536)
    return looks_like_mbox(head) or looks_like_mail(head)


def open_source(path: Path, name: str = "") -> Source:
    """What an import reads, by its shape: a folder, a .jsonl file, mail (an mbox or an .eml, by name or
    by content), or a zip (export or notes)."""
    name = name or path.name
    if path.is_dir():
        if (path / MANIFEST).exists() or (path / MEMORIES_FILE).exists():
            raise ImportSourceError("an unpacked export: import the zip, or its memories.jsonl")
        return open_folder(path)
    if name.lower().endswith(".jsonl"):
        return open_jsonl(path, name)
    if name.lower().endswith(MARKDOWN_SUFFIXES):
        return open_note(path, name)
    if name.lower().endswith(MBOX_SUFFIXES + EML_SUFFIXES) or _mail_head(path):
        with open(path, "rb") as handle:
            head = handle.read(65536)
        mbox = looks_like_mbox(head) or (not looks_like_mail(head) and not name.lower().endswith(EML_SUFFIXES))
        return open_mbox(path, name) if mbox else open_eml(path, name)
    archive = BoundedZip(path)
    by_name = {info.filename: info for info in archive.infos}
    if MANIFEST in by_name:
        return open_export_zip(archive, by_name)
    return open_markdown_zip(archive)
