"""Tags a person gives: the one normal form (trimmed, lowercased, inner whitespace as hyphens) for
storing, filtering and form input, and the reasons a tag is refused."""

from __future__ import annotations

import re

from core.text import text_problem

MAX_TAG_CHARS = 64


class TagError(ValueError):
    """A tag the user gave cannot be stored; the message says why."""


def normalize_tag(raw: str) -> str:
    """Trim, lowercase, and turn runs of inner whitespace into single hyphens."""
    if not isinstance(raw, str):
        raise TagError("tags must be strings")
    tag = (filter_tags([raw]) or ("",))[0]
    if not tag:
        raise TagError("a tag cannot be empty")
    if len(tag) > MAX_TAG_CHARS:
        raise TagError(f"the tag '{tag[:20]}…' is {len(tag)} characters; the limit is {MAX_TAG_CHARS}")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in tag):
        raise TagError("a tag cannot contain control characters")
    return tag


def filter_tags(raw_tags) -> tuple[str, ...]:
    """Tags used to filter: normalised like stored tags; blanks dropped, never an error (an odd tag
    simply matches nothing)."""
    return tuple(
        dict.fromkeys(
            re.sub(r"\s+", "-", t.strip().lower())
            for t in raw_tags or ()
            if t and t.strip() and text_problem(t) is None
        )
    )


def normalize_tags(raw_tags, *, limit: int) -> list[str]:
    """Normalise a list of tags, dropping duplicates and keeping the user's order."""
    if raw_tags is None:
        return []
    if isinstance(raw_tags, str) or not isinstance(raw_tags, (list, tuple)):
        raise TagError("tags must be a list of strings")
    tags: list[str] = []
    for raw in raw_tags:
        tag = normalize_tag(raw)
        if tag not in tags:
            tags.append(tag)
    if len(tags) > limit:
        raise TagError(f"a memory can have at most {limit} manual tags; {len(tags)} were given")
    return tags


def split_tags(raw: list[str] | None) -> list[str]:
    """Tags typed into a form: repeated fields, comma-separated values, or both."""
    return [part.strip() for value in raw or [] for part in value.split(",") if part.strip()]
