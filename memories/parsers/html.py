"""HTML: the visible text of a page, its blocks as paragraphs; scripts, styles and the head left out."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from memories.parsers.budget import InflateBudget
from memories.parsers.format import Format, Parsed
from memories.parsers.text import decode

HTML_EXTENSIONS = {"html", "htm", "xhtml"}


class _VisibleText(HTMLParser):
    _SKIP = {"script", "style", "noscript", "template", "head", "svg"}
    _BLOCK = {
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "li",
        "ul",
        "ol",
        "table",
        "tr",
        "br",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "blockquote",
        "main",
        "nav",
        "aside",
        "title",
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self.skip_depth += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n" if tag not in ("br", "li", "tr") else "\n")

    def handle_endtag(self, tag):
        if tag in self._SKIP and self.skip_depth:
            self.skip_depth -= 1
        elif tag in self._BLOCK and tag not in ("li", "tr", "br"):
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.skip_depth:
            self.parts.append(data)


def html_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    return Parsed(text=html_text(decode(data)))


FORMAT = Format(
    extensions=frozenset(HTML_EXTENSIONS),
    parse=parse,
    media_types={"html": "text/html", "htm": "text/html", "xhtml": "application/xhtml+xml"},
    name="HTML",
)
