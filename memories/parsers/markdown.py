"""Markdown notes: the text as it is, titled by its front matter's title or its first level-one heading."""

from __future__ import annotations

import re

from memories.parsers.budget import InflateBudget
from memories.parsers.format import Format, Parsed
from memories.parsers.text import decode

MARKDOWN_EXTENSIONS = {"md", "markdown"}
MAX_TITLE_CHARS = 300
# Front matter is a YAML block at the very top, between two --- lines (Jekyll, Hugo, Obsidian).
_FRONT_MATTER = re.compile(r"\A(?:\ufeff)?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_TITLE_KEY = re.compile(r"^title[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE | re.IGNORECASE)
_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_ATX_H1 = re.compile(r"^[ ]{0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT_H1 = re.compile(r"^[ ]{0,3}=+[ \t]*$")
# Inline markup a title shows as text: links and images keep their text, emphasis and code lose marks.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_WIKI_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3}|`+|~~)(.+?)\1")
_ATTRIBUTES = re.compile(r"[ \t]*\{[#.][^}]*\}[ \t]*$")


def markdown_title(text: str) -> str | None:
    """The front matter's `title:`, else the first `# ` (or === underlined) heading outside code."""
    body = text
    front = _FRONT_MATTER.match(text)
    if front:
        key = _TITLE_KEY.search(front.group(1))
        value = _scalar(key.group(1)) if key else ""
        if value:
            return _clean(value)
        body = text[front.end() :]
    fence = ""
    previous = ""
    for line in body.splitlines()[:2000]:
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _ATX_H1.match(line)
        if heading:
            return _clean(heading.group(1))
        if previous.strip() and _SETEXT_H1.match(line):
            return _clean(previous)
        previous = line
    return None


def _scalar(value: str) -> str:
    """A one-line YAML scalar without its quotes; block scalars (| and >) and lists give nothing."""
    value = value.split(" #", 1)[0].strip() if not value.startswith(("'", '"')) else value
    if value[:1] in ("|", ">", "[", "{") or not value:
        return ""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value.strip()


def _clean(title: str) -> str | None:
    title = _ATTRIBUTES.sub("", title)
    title = _WIKI_LINK.sub(r"\1", _LINK.sub(r"\1", title))
    for _ in range(3):
        title = _EMPHASIS.sub(r"\2", title)
    title = " ".join(title.split())
    return title[:MAX_TITLE_CHARS] or None


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    text = decode(data)
    return Parsed(text=text, title=markdown_title(text))


FORMAT = Format(
    extensions=frozenset(MARKDOWN_EXTENSIONS),
    parse=parse,
    media_types={"md": "text/markdown", "markdown": "text/markdown"},
    name="Markdown",
)
