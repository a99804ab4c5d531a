"""HTML: a web page's main content without its navigation and other page furniture (trafilatura), or
all the visible text of a simple page; the title from <title>, og:title or the first <h1>."""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.text import decode

HTML_EXTENSIONS = {"html", "htm", "xhtml"}
MAX_TITLE_CHARS = 300
# trafilatura takes about 3 s per MB of dense text on one core; a page with more visible text than
# this is a document (a book saved as HTML), where navigation is a negligible share: it keeps it all.
MAX_MAIN_CONTENT_CHARS = 500_000
# A page where main-content extraction left out at least this share (and MIN_DROPPED_CHARS) of the
# visible text says so in a notice.
NOTICE_DROPPED_SHARE = 0.1
MIN_DROPPED_CHARS = 200
ALL_SCRIPT = (
    "no extractable text: the page is all script (its text would be made by JavaScript, which is not run "
    "here); save the page from the browser after it has loaded, or upload its text"
)
# Titles that name no document: what editors and site builders put in when nobody wrote one.
GENERIC_TITLES = frozenset(
    {
        "",
        "untitled",
        "untitled document",
        "untitled page",
        "no title",
        "document",
        "new document",
        "new page",
        "page",
        "title",
        "home",
        "homepage",
        "home page",
        "index",
        "welcome",
        "html",
        "loading...",
        "loading",
    }
)
# Parts of a page that are not its content: landmarks and the class or id names sites give them.
_FURNITURE_TAGS = frozenset({"nav", "header", "footer", "aside", "menu"})
_FURNITURE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search"})
_FURNITURE_NAMES = frozenset(
    {"nav", "navbar", "navigation", "menu", "sidebar", "footer", "header", "breadcrumb", "breadcrumbs", "masthead"}
)
_NAME_TOKEN = re.compile(r"[a-z]+")
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([a-zA-Z0-9_.:-]+)", re.IGNORECASE)
# WHATWG: pages that say Latin-1 or ASCII are read as Windows-1252, as browsers do.
_CHARSET_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252"}


class _Page(HTMLParser):
    """One pass over the page: its visible text with blocks as paragraphs, its title candidates, and
    whether it has scripts and page furniture."""

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
        self.scripts = 0
        self.furniture = 0
        self.svg_depth = 0
        self.title_parts: list[str] | None = None
        self.title = ""
        self.og_title = ""
        self.h1_parts: list[str] | None = None
        self.h1 = ""

    def handle_starttag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        if tag == "svg":
            self.svg_depth += 1
        if tag == "title" and not self.title and self.title_parts is None and not self.svg_depth:
            self.title_parts = []
        elif tag == "meta" and attributes.get("property", attributes.get("name", "")).lower() == "og:title":
            self.og_title = self.og_title or attributes.get("content", "")
        elif tag == "h1" and not self.h1 and self.h1_parts is None and not self.skip_depth:
            self.h1_parts = []
        if tag == "script":
            self.scripts += 1
        if self._is_furniture(tag, attributes):
            self.furniture += 1
        if tag in self._SKIP:
            self.skip_depth += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n" if tag not in ("br", "li", "tr") else "\n")

    def handle_endtag(self, tag):
        if tag == "svg" and self.svg_depth:
            self.svg_depth -= 1
        if tag == "title" and self.title_parts is not None:
            self.title, self.title_parts = _one_line("".join(self.title_parts)), None
        elif tag == "h1" and self.h1_parts is not None:
            self.h1, self.h1_parts = _one_line("".join(self.h1_parts)), None
        if tag in self._SKIP and self.skip_depth:
            self.skip_depth -= 1
        elif tag in self._BLOCK and tag not in ("li", "tr", "br"):
            self.parts.append("\n\n")

    def handle_data(self, data):
        if self.title_parts is not None:
            self.title_parts.append(data)
        if self.h1_parts is not None:
            self.h1_parts.append(data)
        if not self.skip_depth:
            self.parts.append(data)

    @staticmethod
    def _is_furniture(tag: str, attributes: dict[str, str]) -> bool:
        if tag in _FURNITURE_TAGS or attributes.get("role", "").lower() in _FURNITURE_ROLES:
            return True
        names = f"{attributes.get('class', '')} {attributes.get('id', '')}".lower()
        return not _FURNITURE_NAMES.isdisjoint(_NAME_TOKEN.findall(names))

    def text(self) -> str:
        text = "".join(self.parts)
        text = re.sub(r"[ \t\f\v]+", " ", text)
        text = re.sub(r" *\n *", "\n", text)
        return re.sub(r"\n{3,}", "\n\n", text).strip()

    def best_title(self) -> str | None:
        for candidate in (self.title, _one_line(self.og_title), self.h1):
            if candidate.lower() not in GENERIC_TITLES:
                return candidate[:MAX_TITLE_CHARS]
        return None


def _read(markup: str) -> _Page:
    page = _Page()
    page.feed(markup)
    page.close()
    return page


def html_text(html: str) -> str:
    """All the visible text of a page, its blocks as paragraphs; scripts, styles and the head left out."""
    return _read(html).text()


def html_title(html: str) -> str | None:
    """The page's <title>, else its og:title, else its first <h1>, skipping titles that name nothing."""
    return _read(html).best_title()


def _one_line(value: str) -> str:
    return " ".join(value.split())


def decode_html(data: bytes) -> str:
    """The page's text in the charset its <meta> declares, when the bytes are valid in it; else
    detected like any text."""
    if not data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        declared = _META_CHARSET.search(data[:4096])
        if declared:
            name = declared.group(1).decode("ascii").lower()
            try:
                return data.decode(codecs.lookup(_CHARSET_ALIASES.get(name, name)).name)
            except (LookupError, UnicodeDecodeError):
                pass
    return decode(data)


def main_content(markup: str) -> str | None:
    """The page's main content by trafilatura (tuned for recall: a memory would rather keep a stray
    line than lose a paragraph), headings as #, list items as -, table cells joined by |; None when
    it finds none."""
    import trafilatura

    document = trafilatura.bare_extraction(
        markup, include_comments=False, include_tables=True, favor_recall=True, with_metadata=False
    )
    body = getattr(document, "body", None)
    if body is None:
        return None
    blocks = [block for element in body if (block := _block(element))]
    return "\n\n".join(blocks) or None


def _block(element) -> str:
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag == "head":
        level = re.fullmatch(r"h([1-6])", element.get("rend", "") or "")
        text = _inline(element)
        return "#" * int(level.group(1) if level else 2) + " " + text if text else ""
    if tag == "list":
        return "\n".join(f"- {text}" for item in element if (text := _inline(item)))
    if tag == "table":
        rows = [" | ".join(_inline(cell) for cell in row) for row in element if len(row)]
        return "\n".join(row for row in rows if row.strip(" |"))
    if tag == "code":
        return "".join(element.itertext()).strip("\n")
    return _inline(element)


def _inline(element) -> str:
    return _one_line("".join(element.itertext()))


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    markup = decode_html(data)
    page = _read(markup)
    visible = page.text()
    title = page.best_title()
    if not visible and page.scripts:
        raise ExtractionError(ALL_SCRIPT)
    if not page.furniture or not visible or len(visible) > MAX_MAIN_CONTENT_CHARS:
        # A simple page (a note saved as HTML) keeps every word.
        return Parsed(text=visible, title=title)
    main = main_content(markup)
    if not main:
        return Parsed(text=visible, title=title)
    notices = []
    dropped = len(visible) - len(main)
    if dropped >= MIN_DROPPED_CHARS and dropped >= NOTICE_DROPPED_SHARE * len(visible):
        notices.append(
            f"the page's navigation, menus and other furniture were left out: {len(main):,} of its "
            f"{len(visible):,} visible characters kept as its main content (the original file keeps the whole page)"
        )
    return Parsed(text=main, title=title, notices=notices)


FORMAT = Format(
    extensions=frozenset(HTML_EXTENSIONS),
    parse=parse,
    media_types={"html": "text/html", "htm": "text/html", "xhtml": "application/xhtml+xml"},
    name="HTML",
)
