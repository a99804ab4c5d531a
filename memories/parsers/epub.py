"""EPUB e-books: the chapters in the order of the package's spine, each XHTML chapter's visible text
(memories.parsers.html), read through the bounded zip; the title from the package's dc:title."""

from __future__ import annotations

import posixpath
from urllib.parse import unquote, urldefrag

from memories.parsers.bounded_zip import DocumentArchive
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.html import html_text
from memories.parsers.text import decode
from memories.parsers.titles import declared_title
from memories.parsers.xmltree import parse_xml

CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
OPF = "{http://www.idpf.org/2007/opf}"
DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
ENC = "{http://www.w3.org/2001/04/xmlenc#}"
# Fonts may be obfuscated by these (a reader undoes it without a key); anything else is DRM.
_FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
_CHAPTER_TYPES = {"application/xhtml+xml", "text/html", "application/xml"}


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    archive = DocumentArchive(data, what=".epub", budget=budget, max_inflated=max_inflated)
    mimetype = (archive.read("mimetype") or b"")[:200].decode("ascii", "replace").strip()
    if mimetype and mimetype != "application/epub+zip":
        raise ExtractionError(f"this is not an .epub file (it says it is {mimetype!r})")
    package_path = _package_path(archive)
    package = parse_xml(archive.read(package_path) or b"", what=".epub", part=package_path)
    folder = posixpath.dirname(package_path)
    items = {}
    for item in package.iter(OPF + "item"):
        href = item.get("href")
        if item.get("id") and href:
            path = posixpath.normpath(posixpath.join(folder, unquote(urldefrag(href)[0])))
            items[item.get("id")] = (path, item.get("media-type", ""), item.get("properties", "").split())
    order = [ref.get("idref") for ref in package.iter(OPF + "itemref") if ref.get("idref") in items]
    if not order:  # no spine: the manifest's own order
        order = list(items)
    listed = [items[ref] for ref in dict.fromkeys(order)]
    chapters = [path for path, media, props in listed if media in _CHAPTER_TYPES and "nav" not in props]
    encrypted = _encrypted(archive)
    texts: list[str] = []
    notices: list[str] = []
    missing: list[str] = []
    for path in chapters:
        if path in encrypted:
            raise ExtractionError("this .epub is DRM-protected (its chapters are encrypted) and cannot be read")
        content = archive.read(path)
        if content is None:
            missing.append(path)
            continue
        try:
            text = html_text(decode(content))
        except ExtractionError as exc:
            notices.append(f"the chapter {path} was left out: {exc}")
            continue
        if text:
            texts.append(text)
    if missing:
        notices.append(f"{len(missing):,} chapter(s) the book lists are not in the file: {', '.join(missing[:5])}")
    title_element = next(package.iter(DC_TITLE), None)
    title = declared_title("".join(title_element.itertext())) if title_element is not None else None
    return Parsed(text="\n\n".join(texts), title=title, notices=notices)


def _package_path(archive: DocumentArchive) -> str:
    """Where the package document (.opf) is, as META-INF/container.xml says."""
    data = archive.read("META-INF/container.xml")
    if data is None:
        raise ExtractionError("this is not a valid .epub file (no META-INF/container.xml inside)")
    container = parse_xml(data, what=".epub", part="META-INF/container.xml")
    roots = [root for root in container.iter(CONTAINER + "rootfile") if root.get("full-path")]
    preferred = [root for root in roots if root.get("media-type") == "application/oebps-package+xml"]
    for root in preferred or roots:
        path = posixpath.normpath(unquote(root.get("full-path", ""))).lstrip("/")
        if (found := archive.find(path)) is not None:
            return found
    raise ExtractionError("this is not a valid .epub file (the package document it names is missing)")


def _encrypted(archive: DocumentArchive) -> set[str]:
    """The members encrypted with a key (DRM), from META-INF/encryption.xml."""
    data = archive.read("META-INF/encryption.xml")
    if data is None:
        return set()
    encryption = parse_xml(data, what=".epub", part="META-INF/encryption.xml")
    found = set()
    for entry in encryption.iter(ENC + "EncryptedData"):
        method = entry.find(ENC + "EncryptionMethod")
        reference = entry.find(f"{ENC}CipherData/{ENC}CipherReference")
        if reference is None or (method is not None and method.get("Algorithm") in _FONT_OBFUSCATION):
            continue
        found.add(posixpath.normpath(unquote(reference.get("URI", ""))).lstrip("/"))
    return found


FORMAT = Format(extensions=frozenset({"epub"}), parse=parse, media_types={"epub": "application/epub+zip"})
