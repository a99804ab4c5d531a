"""Small formatting helpers for messages people read."""

from __future__ import annotations


def megabytes(size: int) -> str:
    """A size for people: MB from one megabyte up, KB or bytes below (limits can be set that low)."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{size // 1024} KB" if size >= 1024 else f"{size} bytes"
