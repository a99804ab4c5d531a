"""Validation of memory input: each rule raises MemoryInputError naming the field it refused."""

from __future__ import annotations

import json

from django.conf import settings

from core.normalise import Normalised, normalise_label, normalise_text
from core.text import TextError, check_json, check_text, strip_display_controls, text_problem
from memories.models import Source
from memories.tag_rules import TagError, normalize_tags

MAX_TITLE_CHARS = 500
MAX_METADATA_BYTES = 64 * 1024
MAX_MANUAL_TAGS = 50
# A document's own title longer than this is cut at a word (a PDF's "title" is sometimes a paragraph).
MAX_DOCUMENT_TITLE_CHARS = 200
MAX_NOTICES = 20
MAX_NOTICE_CHARS = 1000


class MemoryInputError(ValueError):
    """Input that cannot become a memory. `status` is the HTTP status a front door should answer with."""

    status = 422

    def __init__(self, message: str, *, field: str | None = None, index: int | None = None):
        self.field = field
        self.index = index
        prefix = f"item {index}: " if index is not None else ""
        super().__init__(prefix + message)

    @property
    def named(self) -> str:
        """The message led by the field it refuses, once, as the MCP tools and the import report show it
        (a clean-text refusal's message already starts with its field: "metadata.author: contains ...")."""
        message = str(self)
        if self.field and not message.startswith(f"{self.field}:"):
            return f"{self.field}: {message}"
        return message


class MemoryTooLargeError(MemoryInputError):
    status = 413


class TagNotFoundError(MemoryInputError):
    status = 404


def clean_title(title, content: str, *, index: int | None) -> str:
    if title is None:
        title = ""
    if not isinstance(title, str):
        raise MemoryInputError("title must be a string", field="title", index=index)
    _check(title, "title", index)
    title = title_as_stored(title)
    if not title:
        # No title given: the first line of the content, shortened at a word.
        title = _shortened(strip_display_controls(content.strip().splitlines()[0]), 80)
    if len(title) > MAX_TITLE_CHARS:
        raise MemoryInputError(
            f"title is {len(title)} characters; the limit is {MAX_TITLE_CHARS}", field="title", index=index
        )
    return title


def title_as_stored(title: str) -> str:
    """A given title as clean_title stores it: one line, normalised (core.normalise.normalise_label)."""
    return strip_display_controls(normalise_label(title))


def _shortened(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] + "…"


def document_title(title) -> str:
    """The title a document declares (memories.parsers' Extracted.title) as a memory's title, or ""
    when it declares none that can be shown: one line, normalised, cut at a word when very long."""
    if not isinstance(title, str) or text_problem(title):
        return ""
    return _shortened(title_as_stored(title), MAX_DOCUMENT_TITLE_CHARS)


def content_prepare(content, *, index: int | None) -> Normalised:
    """Content checked and normalised (core.normalise), with the notices of what normalising it
    repaired or dropped."""
    if not isinstance(content, str):
        raise MemoryInputError("content must be a string", field="content", index=index)
    if "\x00" in content:
        raise MemoryInputError("content contains NUL bytes; is it a binary file?", field="content", index=index)
    _check(content, "content", index)
    if not content.strip():
        raise MemoryInputError("content is empty", field="content", index=index)
    _check_length(content, index)
    normalised = normalise_text(content)
    if not normalised.text:
        # Everything was control characters, glyph names or the like.
        reason = f" ({normalised.notices[-1].rstrip('.')})" if normalised.notices else ""
        raise MemoryInputError(
            f"content has no text once what is not text is removed{reason}", field="content", index=index
        )
    _check_length(normalised.text, index)
    return normalised


def _check_length(content: str, index: int | None) -> None:
    limit = settings.KYBERNESIS_MAX_MEMORY_CHARS
    if len(content) > limit:
        raise MemoryTooLargeError(
            f"content is {len(content):,} characters; the limit is {limit:,}", field="content", index=index
        )


def clean_content(content, *, index: int | None) -> str:
    """Content as it is stored: checked and normalised (content_prepare, without its notices)."""
    return content_prepare(content, index=index).text


def clean_notices(notices, *, index: int | None) -> list[str]:
    """Notices as stored on a memory: strings, one line each, without repeats, at most MAX_NOTICES."""
    if notices is None:
        return []
    if isinstance(notices, str) or not isinstance(notices, (list, tuple)):
        raise MemoryInputError("notices must be a list of strings", field="notices", index=index)
    cleaned: list[str] = []
    for notice in notices:
        if not isinstance(notice, str):
            raise MemoryInputError("notices must be a list of strings", field="notices", index=index)
        _check(notice, "notices", index)
        notice = strip_display_controls(notice)[:MAX_NOTICE_CHARS]
        if notice and notice not in cleaned:
            cleaned.append(notice)
    return cleaned[:MAX_NOTICES]


def clean_priority(priority, *, index: int | None) -> float | None:
    """A priority the caller gave, or None for the computed default (tier_rules.default_priority)."""
    if priority is None:
        return None
    if isinstance(priority, bool) or not isinstance(priority, (int, float)):
        raise MemoryInputError("priority must be a number from 0 to 1", field="priority", index=index)
    if not 0.0 <= float(priority) <= 1.0:
        raise MemoryInputError(f"priority must be from 0 to 1, got {priority}", field="priority", index=index)
    return float(priority)


def clean_source(source, *, index: int | None) -> str:
    if source not in Source.values:
        raise MemoryInputError(
            f"source must be one of {', '.join(Source.values)}; got {source!r}", field="source", index=index
        )
    return Source(source).value


def clean_metadata(metadata, *, index: int | None) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise MemoryInputError("metadata must be a JSON object", field="metadata", index=index)
    try:
        check_json(metadata, field="metadata")
    except TextError as exc:
        raise MemoryInputError(str(exc), field=exc.field, index=index) from None
    try:
        size = len(json.dumps(metadata).encode())
    except (TypeError, ValueError) as exc:
        raise MemoryInputError(f"metadata is not JSON-serialisable: {exc}", field="metadata", index=index) from exc
    if size > MAX_METADATA_BYTES:
        raise MemoryInputError(
            f"metadata is {size:,} bytes; the limit is {MAX_METADATA_BYTES:,}", field="metadata", index=index
        )
    return metadata


def clean_tags(tags, *, index: int | None) -> list[str]:
    for tag in tags or ():
        _check(tag, "tags", index)
    try:
        return normalize_tags(tags, limit=MAX_MANUAL_TAGS)
    except TagError as exc:
        raise MemoryInputError(str(exc), field="tags", index=index) from exc


def _check(value, field: str, index: int | None) -> None:
    try:
        check_text(value, field=field)
    except TextError as exc:
        raise MemoryInputError(str(exc), field=field, index=index) from None
