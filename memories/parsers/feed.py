"""XML, and news feeds in it (RSS 0.9x, 1.0 and 2.0, Atom 0.3 and 1.0): a feed becomes its articles,
each a heading with its date, author, link and text; any other XML is kept as the text it is.

A feed saved from a browser or a feed reader is a list of articles wrapped in markup. Read as text,
its element names, namespaces and escaped HTML ("rdf", "xmlns", "&lt;br /&gt;") fill the memory's
passages, tags and graph. The feed's own title becomes the memory's title. The bytes are decoded by
the text reader (which tells Shift_JIS and EUC-JP from UTF-8 as it does for any text) and parsed
safely (memories.parsers.xmltree); a feed that is not well-formed XML is kept as its text, with a
notice saying so."""

from __future__ import annotations

import html.entities
import re
from datetime import datetime
from email.utils import parsedate_to_datetime

from lxml import etree

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.html import html_text
from memories.parsers.text import decode
from memories.parsers.xmltree import local_name, parse_xml

FEED_EXTENSIONS = frozenset({"xml", "rss", "atom", "rdf"})
# The root elements of feeds, and the namespaces that make an RDF document or a <feed> one.
_FEED_ROOT = re.compile(r"<(?:[\w.-]+:)?(rss|RDF|feed)[\s>/]")
_FEED_NAMESPACES = (
    "http://purl.org/rss/1.0/",
    "http://my.netscape.com/rdf/simple/0.9/",
    "http://www.w3.org/2005/Atom",
    "http://purl.org/atom/ns#",
)
_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
_HEAD_CHARS = 4096
_MARKUP = re.compile(r"<[a-zA-Z/!][^>]*>|&[#\w]+;")
NOT_WELL_FORMED = "the feed is not well-formed XML, so it was kept as its text, markup included"

_DATES = ("pubDate", "date", "published", "updated", "issued", "modified", "created")
_BODIES = ("encoded", "content", "description", "summary")


def is_feed(text: str) -> bool:
    """Whether the text is a feed: its root element is <rss>, or an RDF or <feed> document of a feed's
    namespace."""
    head = _DECLARATION.sub("", text[:_HEAD_CHARS], count=1)
    head = re.sub(r"<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>|<\?[^>]*\?>", "", head, flags=re.DOTALL)
    root = _FEED_ROOT.search(head)
    if root is None or head[: root.start()].strip():
        return False
    return root.group(1) == "rss" or any(ns in head for ns in _FEED_NAMESPACES)


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    text = decode(data)
    if not is_feed(text):
        return Parsed(text=text)
    try:
        root = parse_xml(
            _without_external_dtd(_DECLARATION.sub("", text, count=1)).encode("utf-8"), what="feed", part="its markup"
        )
    except ExtractionError:
        return Parsed(text=text, notices=[NOT_WELL_FORMED])
    channel = _child(root, "channel") if local_name(root) != "feed" else root
    channel = channel if channel is not None else root
    entries = [e for e in root.iter() if local_name(e) in ("item", "entry")]
    title = _plain(_child(channel, "title"))
    head = [t for t in (_plain(_child(channel, "description")), _plain(_child(channel, "subtitle"))) if t]
    blocks = ["\n".join(dict.fromkeys(head))] if head else []
    blocks += [block for entry in entries if (block := _entry_text(entry))]
    kind = "Atom" if local_name(root) == "feed" else ("RSS 1.0" if local_name(root) == "RDF" else "RSS")
    return Parsed(
        text="\n\n".join(blocks),
        title=title or None,
        metadata={"feed": {"format": kind, "entries": len(entries)}},
    )


# A DOCTYPE that only names an external DTD (RSS 0.91 names Netscape's), with no internal subset.
_EXTERNAL_DOCTYPE = re.compile(r"<!DOCTYPE[^\[>]*>", re.IGNORECASE)
_NAMED_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})


def _without_external_dtd(text: str) -> str:
    """The feed without a DOCTYPE that names an external DTD, and with the entities such a DTD
    defines (HTML's: &laquo;, &nbsp;) as their characters. libxml2 would otherwise try to fetch the
    DTD, which the safe parser refuses, and the feed would be kept as raw markup. An entity HTML
    does not name stays as text. A DOCTYPE with an internal subset is left to the safe parser."""
    if not _EXTERNAL_DOCTYPE.search(text[:_HEAD_CHARS]):
        return text

    def character(match: re.Match) -> str:
        name = match.group(1)
        if name in _XML_ENTITIES:
            return match.group(0)
        code = html.entities.name2codepoint.get(name)
        return chr(code) if code is not None else f"&amp;{name};"

    return _NAMED_ENTITY.sub(character, _EXTERNAL_DOCTYPE.sub("", text, count=1))


def _entry_text(entry) -> str:
    """One article: "## title", a line of its date and author, its link, then its text."""
    title = _plain(_child(entry, "title"))
    when = next((d for name in _DATES if (d := _date(_plain(_child(entry, name))))), "")
    author = _plain(_child(entry, "creator")) or _plain(_child(_child(entry, "author"), "name"))
    author = author or _plain(_child(entry, "author"))
    link = _link(entry)
    body = next((b for name in _BODIES if (b := _rich(_child(entry, name)))), "")
    lines = [f"## {title}" if title else ""]
    lines.append(" · ".join(part for part in (when, author) if part))
    lines.append(link)
    head = "\n".join(line for line in lines if line)
    return "\n\n".join(part for part in (head, body) if part)


def _child(element, name: str):
    """The first child of that local name (any namespace), or None."""
    if element is None:
        return None
    return next((c for c in element if local_name(c) == name), None)


def _plain(element) -> str:
    """An element's text on one line; escaped markup in it (RSS titles often hold some) read as HTML."""
    if element is None:
        return ""
    value = "".join(element.itertext())
    if _MARKUP.search(value):
        value = html_text(value)
    return " ".join(value.split())


def _rich(element) -> str:
    """An article's text: XHTML children, escaped HTML (RSS descriptions, Atom type="html") or plain text."""
    if element is None:
        return ""
    if len(element) and element.get("type", "") in ("xhtml", "application/xhtml+xml", ""):
        markup = (element.text or "") + "".join(etree.tostring(c, encoding="unicode") for c in element)
        return html_text(markup).strip()
    value = "".join(element.itertext())
    if element.get("type", "") == "text":
        return value.strip()
    return html_text(value).strip() if _MARKUP.search(value) else value.strip()


def _link(entry) -> str:
    """The article's address: RSS's <link> text, or Atom's alternate link."""
    for child in entry:
        if local_name(child) != "link":
            continue
        href = child.get("href")
        if href is None:
            return (child.text or "").strip()
        if child.get("rel", "alternate") == "alternate":
            return href.strip()
    guid = _child(entry, "guid")
    if guid is not None and guid.get("isPermaLink", "true") == "true" and (guid.text or "").startswith("http"):
        return guid.text.strip()
    return ""


def _date(value: str) -> str:
    """A feed's date as "YYYY-MM-DD HH:MM" (RFC 822 or ISO 8601), or as it is written."""
    if not value:
        return ""
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
    return moment.strftime("%Y-%m-%d %H:%M") if (moment.hour or moment.minute) else moment.strftime("%Y-%m-%d")


FORMAT = Format(
    extensions=FEED_EXTENSIONS,
    parse=parse,
    media_types={"rss": "application/rss+xml", "atom": "application/atom+xml", "rdf": "application/rdf+xml"},
    name="XML and news feeds (RSS, Atom)",
)
