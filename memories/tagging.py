"""Auto tags: system-generated {tag, confidence} pairs, at most six per memory."""

from __future__ import annotations

import re

MAX_AUTO_TAGS = 6
MAX_TAG_CHARS = 64

_PROVIDER_TAGS = {"google-drive": "google-drive", "google_drive": "google-drive", "gdrive": "google-drive",
                  "notion": "notion"}


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
    return tuple(dict.fromkeys(re.sub(r"\s+", "-", t.strip().lower()) for t in raw_tags or () if t and t.strip()))


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


def structural_auto_tags(*, source: str, metadata: dict) -> list[dict]:
    """Tags that follow from where a memory came from: source type, file extension, provider."""
    candidates: list[str] = [source]
    extension = str(metadata.get("extension") or "").lower().lstrip(".")
    if not extension and metadata.get("filename"):
        name = str(metadata["filename"])
        if "." in name.strip("."):
            extension = name.rsplit(".", 1)[1].lower()
    if extension and re.fullmatch(r"[a-z0-9]{1,10}", extension):
        candidates.append(extension)
    provider = str(metadata.get("provider") or "").lower()
    if provider:
        candidates.append(_PROVIDER_TAGS.get(provider, provider))
    tags: list[dict] = []
    for tag in candidates:
        if tag and tag not in (t["tag"] for t in tags):
            tags.append({"tag": tag, "confidence": 1.0})
    return tags[:MAX_AUTO_TAGS]
