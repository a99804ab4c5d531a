"""What every format module provides: a Format entry for the registry, whose parse turns a file's bytes
into a Parsed result or raises memories.parsers.errors.ExtractionError saying why it cannot."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from memories.parsers.budget import InflateBudget

if TYPE_CHECKING:
    from PIL.Image import Image

    from memories.parsers.pages import PageText


@dataclass
class Parsed:
    """A file's text, and what its format knows besides: its own title, its page count (for paged
    formats), notices a reader should see (parts that could not be read, for example) and metadata
    to keep beside the text (the registry merges it into Extracted.metadata).

    Paged formats (PDF, images) also give `page_texts`, one PageText per page: pages whose state is
    "pending" have no usable text and wait for OCR (memories.parsers.ocr)."""

    text: str
    title: str | None = None
    pages: int | None = None
    notices: list[str] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    page_texts: list[PageText] | None = None

    @classmethod
    def from_pages(cls, pages: list[PageText], *, title: str | None = None) -> Parsed:
        parsed = cls(text="", title=title, pages=len(pages), page_texts=pages)
        parsed.join_pages()
        return parsed

    def join_pages(self) -> None:
        # Page breaks become paragraph breaks, so chunks prefer to end at a page.
        self.text = "\n\n".join(p.text.strip() for p in self.page_texts or () if p.text.strip())

    @property
    def pending_pages(self) -> list[int]:
        return [p.number for p in self.page_texts or () if p.state == "pending"]


@dataclass
class PageImage:
    """One page rendered for OCR (greyscale), or why it could not be rendered."""

    number: int
    image: Image | None
    error: str = ""


class Parse(Protocol):
    """The one entry point of a format: decompressing is charged to `budget` and limited to
    `max_inflated` bytes for this file."""

    def __call__(self, data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed: ...


class Render(Protocol):
    """A paged format's pages (1-based numbers) as images for OCR, at most `max_pixels` each."""

    def __call__(self, data: bytes, numbers: list[int], *, dpi: int, max_pixels: int) -> Iterator[PageImage]: ...


@dataclass(frozen=True)
class Format:
    """One entry of the registry: the extensions it reads, its parse, its media types and what to add
    to "no extractable text".

    A file's content chooses its format (memories.parsers.detect): the format whose media_types
    include the detected type reads it, and the extension only chooses among text flavours or names
    the format that explains why a damaged file cannot be read. The media types are also what the
    file's metadata says where Python's mimetypes knows none. A format whose signature detect does
    not know gives its own `sniff` (the file's bytes -> whether they are this format). `name` is how
    the list of supported types calls it (by default the label of its first media type). A paged
    format that can be read by OCR also has `render`, and says what it is (`what`: "PDF", "image")."""

    extensions: frozenset[str]
    parse: Parse
    media_types: dict[str, str] = field(default_factory=dict)
    no_text_hint: str = ""
    sniff: Callable[[bytes], bool] | None = None
    name: str = ""
    render: Render | None = None
    what: str = "file"
