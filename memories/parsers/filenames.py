"""File names: which names are accepted, and the extension a file is known by."""

from __future__ import annotations

import unicodedata

from memories.parsers.errors import ExtractionError

MAX_FILENAME_CHARS = 255
# Files known by their whole name rather than an extension: the extension their metadata records
# (source code is shown in a monospace font). Any other file without an extension is read as text when
# its content is text (memories.parsers.detect).
KNOWN_NAMES = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "makefile",
    "gnumakefile": "makefile",
    "gemfile": "rb",
    "rakefile": "rb",
    "vagrantfile": "rb",
    "jenkinsfile": "groovy",
    "readme": "txt",
    "license": "txt",
    "licence": "txt",
    "copying": "txt",
    "copyright": "txt",
    "notice": "txt",
    "authors": "txt",
    "contributors": "txt",
    "contributing": "txt",
    "changelog": "txt",
    "changes": "txt",
    "news": "txt",
    "install": "txt",
    "todo": "txt",
    "procfile": "txt",
}


def clean_filename(raw: str | None) -> str:
    """Refuse names that are not a plain file name, rather than guess what the sender meant."""
    if raw is None or not raw.strip():
        raise ExtractionError("the file has no name")
    if len(raw) > MAX_FILENAME_CHARS:
        raise ExtractionError(f"the file name is {len(raw)} characters long; the limit is {MAX_FILENAME_CHARS}")
    if "/" in raw or "\\" in raw:
        raise ExtractionError("the file name contains a path separator (/ or \\)")
    if raw.strip() in (".", "..") or ".." in raw:
        raise ExtractionError("the file name contains '..'")
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in raw):
        raise ExtractionError("the file name contains control characters")
    return raw.strip()


def file_extension(filename: str) -> str:
    lower = filename.lower()
    if lower in KNOWN_NAMES:
        return KNOWN_NAMES[lower]
    stem, dot, ext = lower.rpartition(".")
    return ext if dot and stem else ""
