"""What a source gives an import: items (a record in the export format, or why an entry cannot be one),
the Source holding them, the error for a source that cannot be read at all, and the format's names."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import BinaryIO

FORMAT_NAME = "kybernesis-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MEMORIES_FILE = "memories.jsonl"
CHAT_SESSIONS_FILE = "chat_sessions.jsonl"
ORIGINALS_DIR = "originals/"
MARKDOWN_SUFFIXES = (".md", ".markdown")


class ImportSourceError(ValueError):
    """The whole source cannot be read (not a zip, unknown manifest version, nothing importable)."""


@dataclass(frozen=True)
class SessionRef:
    """The conversation a chat message belongs to, as its source names it: `key` is its id there
    ("chatgpt:<id>"), and the title and times are the conversation's."""

    key: str
    title: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Item:
    """One memory to import (`record`, in the export format) or why it cannot be (`error`). `key` is the
    id the source gives it (a conversation and message id), so a second import finds it by that id
    instead of by its text; `session` the chat session it joins."""

    label: str
    record: dict | None = None
    error: str = ""
    key: str = ""
    session: SessionRef | None = None
    # A part of the item before it (a mail's attachment): a memory of its own, but not one of the items
    # the source counts in its total, so progress (processed of total) counts it with its message.
    attached: bool = False
    # Already in the account, known without reading it (see Source.is_known): counted as already there.
    known: bool = False


@dataclass
class Source:
    kind: str  # the registry's name for what was read: "export", "markdown", "chatgpt", "claude", "mail"
    manifest: dict = field(default_factory=dict)
    chat_sessions: list[Item] = field(default_factory=list)  # one per chat_sessions.jsonl line, or its error
    errors: list[Item] = field(default_factory=list)  # entries refused before any memory is read
    items: Iterator[Item] = field(default_factory=lambda: iter(()))
    total: int | None = None  # how many items, when known up front
    # An export zip's originals: open_original(entry, limit) is a bounded stream of one originals/ entry.
    open_original: Callable[[str, int], BinaryIO] | None = None
    # What the reader leaves out on purpose, in sentences for the report; filled as the items are read
    # (a streamed source only knows its counts at the end), so read it after the items.
    notices: Callable[[], list[str]] = field(default=list)
    # Where in a record's metadata the source puts an identity of its own (a mail's Message-ID): a
    # record whose identity the account already holds, or this import already gave, is a duplicate.
    key_path: tuple[str, ...] = ()
    # Set by the import before it reads the items: whether the account holds the item with this key and
    # everything that came with it, so a source can skip reading it at all (a resumed mail import).
    is_known: Callable[[str], bool] | None = None
