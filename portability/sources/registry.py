"""Which reader takes a file an import is given, by its content: one entry per format, tried in order,
each saying whether it knows the file (`detect`) and reading it (`open`). The name of a file is only a
hint where content cannot tell (a note is text like any other); a ChatGPT export named notes.md is a
ChatGPT export, and a PDF named conversations.json is refused as a PDF.

A new format is one module with a detect and an open function and one Reader in READERS.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from memories.parsers.mail import looks_like_mail
from portability.sources import reading
from portability.sources.chatgpt import open_chatgpt
from portability.sources.claude import open_claude
from portability.sources.conversations import (
    CONVERSATIONS_FILE,
    HEAD_BYTES,
    is_chatgpt,
    is_claude,
    json_shape,
    looks_like,
)
from portability.sources.export import open_export_zip, open_jsonl
from portability.sources.items import MANIFEST, MARKDOWN_SUFFIXES, MEMORIES_FILE, ImportSourceError, Source
from portability.sources.mail import EML_SUFFIXES, MBOX_SUFFIXES, looks_like_mbox, open_eml, open_mbox
from portability.sources.notes import open_folder, open_markdown_zip, open_note
from portability.sources.reading import BoundedZip

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


class Probe:
    """What the readers look at: the path, the name its owner gave it, its first bytes, and for a zip
    its directory and the head of a conversations.json inside, each read once and only when asked."""

    def __init__(self, path: Path, name: str = ""):
        self.path = path
        self.name = name or path.name
        self.is_dir = path.is_dir()

    @cached_property
    def head(self) -> bytes:
        if self.is_dir:
            return b""
        with open(self.path, "rb") as handle:
            return handle.read(HEAD_BYTES)

    @property
    def is_zip(self) -> bool:
        return self.head.startswith(_ZIP_MAGIC)

    @cached_property
    def archive(self) -> BoundedZip:
        return BoundedZip(self.path)

    @cached_property
    def by_name(self) -> dict:
        return {info.filename: info for info in self.archive.infos}

    @cached_property
    def conversations_entry(self):
        """The zip's conversations.json (the shallowest, when a folder was zipped around it), or None."""
        found = [
            info
            for info in self.archive.infos
            if PurePosixPath(info.filename).name.lower() == CONVERSATIONS_FILE
            and not info.is_dir()
            and len(PurePosixPath(info.filename).parts) <= 3
            and self.archive.refusal(info, reading.MAX_JSONL_BYTES) is None
        ]
        return min(found, key=lambda i: (len(PurePosixPath(i.filename).parts), i.filename)) if found else None

    @cached_property
    def entry_head(self) -> bytes:
        entry = self.conversations_entry
        if entry is None:
            return b""
        with self.archive.open_bounded(entry, reading.MAX_JSONL_BYTES) as stream:
            return stream.read(HEAD_BYTES)

    @cached_property
    def shape(self):
        return json_shape(self.head)

    @cached_property
    def entry_shape(self):
        return json_shape(self.entry_head)


@dataclass(frozen=True)
class Reader:
    kind: str  # stored on the job: "export", "markdown", "chatgpt", ...
    label: str  # what a person calls it: "ChatGPT export"
    detect: Callable[[Probe], bool]
    open: Callable[[Probe], Source]


def _file_opener(path: Path) -> Callable[[], io.BufferedReader]:
    return lambda: open(path, "rb")


def _entry_opener(probe: Probe) -> Callable[[], reading.Capped]:
    entry = probe.conversations_entry
    return lambda: probe.archive.open_bounded(entry, reading.MAX_JSONL_BYTES)


def _open_conversations_file(opener):
    def open_file(probe: Probe) -> Source:
        shape = probe.shape
        return opener(
            _file_opener(probe.path),
            prefix=shape.prefix,
            single=not shape.prefix,
            what=probe.name or CONVERSATIONS_FILE,
        )

    return open_file


def _open_conversations_zip(opener):
    def open_zip(probe: Probe) -> Source:
        shape = probe.entry_shape
        what = f"{probe.conversations_entry.filename} in {probe.name}"
        return opener(_entry_opener(probe), prefix=shape.prefix, single=not shape.prefix, what=what)

    return open_zip


def _zip_has_conversations(test) -> Callable[[Probe], bool]:
    return lambda p: (
        p.is_zip and MANIFEST not in p.by_name and p.conversations_entry is not None and test(p.entry_shape)
    )


def _open_folder(probe: Probe) -> Source:
    if (probe.path / MANIFEST).exists() or (probe.path / MEMORIES_FILE).exists():
        raise ImportSourceError("an unpacked export: import the zip, or its memories.jsonl")
    return open_folder(probe.path)


def _is_export_record_lines(probe: Probe) -> bool:
    """A memories.jsonl: JSON objects shaped like export records, one a line; its name is the hint
    when the first line is longer than the head (a memory with its embeddings)."""
    shape = probe.shape
    if shape.top == "object" and "content" in shape.keys and ({"contentHash", "source", "title"} & shape.keys):
        return True
    return probe.name.lower().endswith(".jsonl") and probe.head.lstrip()[:1] == b"{"


def _is_mbox(probe: Probe) -> bool:
    """An mbox by its "From " separator lines, whatever its name (Thunderbird's folders have none:
    "Inbox", "Sent"); a file named .mbox that is text but not one mail is read as an mbox too."""
    if probe.is_dir or probe.is_zip or not probe.head:
        return False
    if looks_like_mbox(probe.head):
        return True
    return (
        probe.name.lower().endswith(MBOX_SUFFIXES)
        and b"\x00" not in probe.head[:8192]
        and not looks_like_mail(probe.head)
    )


def _is_eml(probe: Probe) -> bool:
    """One mail: a header block with From and the headers every mail has (or an .eml's name on text)."""
    if probe.is_dir or probe.is_zip or not probe.head or b"\x00" in probe.head[:8192]:
        return False
    return looks_like_mail(probe.head) or (probe.name.lower().endswith(EML_SUFFIXES) and not probe.shape.top)


def _is_note(probe: Probe) -> bool:
    if not probe.name.lower().endswith(MARKDOWN_SUFFIXES) or b"\x00" in probe.head[:8192]:
        return False
    return not (probe.shape.top and (is_chatgpt(probe.shape) or is_claude(probe.shape)))


READERS: list[Reader] = [
    Reader("markdown", "A folder of Markdown notes", lambda p: p.is_dir, _open_folder),
    Reader(
        "export",
        "Kybernesis export",
        lambda p: p.is_zip and MANIFEST in p.by_name,
        lambda p: open_export_zip(p.archive, p.by_name),
    ),
    Reader("chatgpt", "ChatGPT export", _zip_has_conversations(is_chatgpt), _open_conversations_zip(open_chatgpt)),
    Reader("claude", "Claude export", _zip_has_conversations(is_claude), _open_conversations_zip(open_claude)),
    Reader(
        "markdown",
        "Markdown notes",
        lambda p: p.is_zip and p.conversations_entry is None,
        lambda p: open_markdown_zip(p.archive),
    ),
    Reader("chatgpt", "ChatGPT export", lambda p: is_chatgpt(p.shape), _open_conversations_file(open_chatgpt)),
    Reader("claude", "Claude export", lambda p: is_claude(p.shape), _open_conversations_file(open_claude)),
    Reader("export", "Kybernesis export", _is_export_record_lines, lambda p: open_jsonl(p.path, p.name)),
    Reader("mail", "Mailbox (mbox)", _is_mbox, lambda p: open_mbox(p.path, p.name)),
    Reader("mail", "Mail message (.eml)", _is_eml, lambda p: open_eml(p.path, p.name)),
    Reader("markdown", "Markdown note", _is_note, lambda p: open_note(p.path, p.name)),
]


def detect(path: Path, name: str = "") -> tuple[Reader, Probe]:
    """The reader that takes this file, or ImportSourceError saying what the file looks like instead."""
    probe = Probe(Path(path), name)
    try:
        for reader in READERS:
            if reader.detect(probe):
                return reader, probe
    except OSError as exc:
        raise ImportSourceError(f"{probe.name} cannot be read: {exc.strerror or exc}") from None
    raise ImportSourceError(_refusal(probe))


def _refusal(probe: Probe) -> str:
    if not probe.head:
        return f"{probe.name} is empty"
    if probe.name.lower().endswith(".zip") and not probe.is_zip:
        return f"{probe.name} is not a readable zip file: it looks like {looks_like(probe.head)}"
    if probe.is_zip:  # a zip no reader took: it holds a conversations.json of another kind
        entry = probe.conversations_entry
        what = looks_like(probe.entry_head) if entry is not None else "no conversations.json or notes"
        return (
            f"{probe.name} is a zip, but neither a Kybernesis export, a ChatGPT or Claude export, nor Markdown "
            f"notes: its {entry.filename if entry is not None else 'content'} looks like {what}"
        )
    return (
        f"{probe.name} looks like {looks_like(probe.head)}, which Kybernesis does not import; give a ChatGPT or "
        "Claude export (conversations.json or the export's zip), a Kybernesis export (.zip or memories.jsonl), "
        "mail (an .mbox or an .eml), or Markdown notes (.md, or a zip of them)"
    )


def open_source(path: Path, name: str = "") -> Source:
    """What an import reads, chosen by content (see READERS)."""
    reader, probe = detect(path, name)
    source = reader.open(probe)
    source.kind = reader.kind
    return source


# What the page calls each kind of import; a reader's own label stands in for a kind not named here.
KIND_LABELS = {
    "export": "Kybernesis export",
    "markdown": "Markdown notes",
    "chatgpt": "ChatGPT",
    "claude": "Claude",
    "mail": "Mail",
}


def reader_label(kind: str) -> str:
    if kind in KIND_LABELS:
        return KIND_LABELS[kind]
    return next((reader.label for reader in READERS if reader.kind == kind), kind)
