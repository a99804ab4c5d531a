"""What every format module provides: a Format entry for the registry, whose parse turns a file's bytes
into a Parsed result or raises memories.parsers.errors.ExtractionError saying why it cannot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from memories.parsers.budget import InflateBudget


@dataclass
class Parsed:
    """A file's text, and what its format knows besides: its own title, its page count (for paged
    formats) and notices a reader should see (parts that could not be read, for example)."""

    text: str
    title: str | None = None
    pages: int | None = None
    notices: list[str] = field(default_factory=list)


class Parse(Protocol):
    """The one entry point of a format: decompressing is charged to `budget` and limited to
    `max_inflated` bytes for this file."""

    def __call__(self, data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed: ...


@dataclass(frozen=True)
class Format:
    """One entry of the registry: the extensions it reads, its parse, its media types and what to add
    to "no extractable text".

    A file's content chooses its format (memories.parsers.detect): the format whose media_types
    include the detected type reads it, and the extension only chooses among text flavours or names
    the format that explains why a damaged file cannot be read. The media types are also what the
    file's metadata says where Python's mimetypes knows none. A format whose signature detect does
    not know gives its own `sniff` (the file's bytes -> whether they are this format). `name` is how
    the list of supported types calls it (by default the label of its first media type)."""

    extensions: frozenset[str]
    parse: Parse
    media_types: dict[str, str] = field(default_factory=dict)
    no_text_hint: str = ""
    sniff: Callable[[bytes], bool] | None = None
    name: str = ""
