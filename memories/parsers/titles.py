"""Whether a title a document declares (its properties, metadata or first heading) is a real title, or a
placeholder a program wrote there ("Untitled", "Document1", "Microsoft Word - plan.doc")."""

from __future__ import annotations

import re

MAX_TITLE_CHARS = 300
_PLACEHOLDER = re.compile(
    r"""^(
        untitled(\s+document)?(\s*\d+)?|new\s+document|document\s*\d*|doc\d+|title|slide\s*\d*|
        (powerpoint\s+)?presentation\s*\d*|(excel\s+)?(work)?book\s*\d*|sheet\s*\d*|
        microsoft\s+(word|excel|powerpoint)(\s+-\s+.*)?|
        .*\.(docx?|dotx?|xlsx?|pptx?|pdf|odt|ods|odp|rtf|txt|html?|epub)
    )$""",
    re.IGNORECASE | re.VERBOSE,
)


def declared_title(value: object) -> str | None:
    """The title, its whitespace collapsed and cut at MAX_TITLE_CHARS; None when it is empty, has no
    letter or digit, or is a placeholder."""
    if not isinstance(value, str):
        return None
    title = " ".join(value.split())
    if not any(ch.isalnum() for ch in title) or _PLACEHOLDER.match(title):
        return None
    return title[:MAX_TITLE_CHARS].rstrip()
