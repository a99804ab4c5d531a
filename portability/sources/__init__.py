"""Reading what people bring to an import: a Kybernesis export (zip or its memories.jsonl), a folder
or zip of Markdown notes (an Obsidian vault), a ChatGPT or Claude export (conversations.json or the
export's zip), or mail (an mbox, an .eml). Yields one item per memory, or a per-item error.

Nothing here writes: portability.services turns the records into memories. Archives are read with
bounds, so a zip bomb or an entry named `../../etc/passwd` becomes an error for that entry only. By concern:
items (what a source gives), reading (zips and lines within bounds), registry (which reader takes a file,
by its content), and one module per format: export, notes, mail, chatgpt and claude (with conversations,
what the two share).
"""

from __future__ import annotations

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
    SessionRef,
    Source,
)
from portability.sources.mail import EML_SUFFIXES, MBOX_SUFFIXES, open_eml, open_mbox
from portability.sources.notes import markdown_item, open_folder, open_markdown_zip, open_note
from portability.sources.reading import BoundedZip, lines_of, unsafe_name
from portability.sources.registry import READERS, Reader, detect, open_source, reader_label

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
    "READERS",
    "BoundedZip",
    "ImportSourceError",
    "Item",
    "Reader",
    "SessionRef",
    "Source",
    "check_manifest",
    "detect",
    "lines_of",
    "markdown_item",
    "open_eml",
    "open_export_zip",
    "open_folder",
    "open_jsonl",
    "open_markdown_zip",
    "open_mbox",
    "open_note",
    "open_source",
    "reader_label",
    "unsafe_name",
]
