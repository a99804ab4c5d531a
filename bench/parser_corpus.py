"""The parser benchmark's corpus and measures: the manifest of real documents, reference texts read by
tools other than the parsers, and the figures (3-gram recall, junk characters, titles, phrases)."""

from __future__ import annotations

import email
import email.policy
import json
import re
import shutil
import subprocess
import unicodedata
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

REFERENCE_TIMEOUT_S = 120
# A zip part bigger than this is not read for the reference (the corpus has nothing near it).
MAX_REFERENCE_PART_BYTES = 64 * 1024 * 1024

# Which reference each format gets when the manifest does not name one.
AUTO_REFERENCE = {
    "pdf": "pdftotext",
    "pdf-scan": "file",
    "pdf-mixed": "file",
    "docx": "ooxml",
    "pptx": "ooxml",
    "xlsx": "ooxml",
    "odt": "odf",
    "ods": "odf",
    "odp": "odf",
    "epub": "epub",
    "html": "html",
    "txt": "text",
    "md": "text",
    "csv": "text",
    "code": "text",
    "noext": "text",
    "eml": "email",
    "doc": "file",
    "rtf": "file",
    "image": "file",
}


@dataclass
class Entry:
    """One file of the corpus as the manifest describes it."""

    path: Path
    format: str
    language: str
    titles: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    absent_phrases: list[str] = field(default_factory=list)
    scan: bool = False
    expect: str = "store"
    expect_reason: str | None = None
    reference: dict = field(default_factory=dict)
    source: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name


def load_manifest(corpus: Path) -> list[Entry]:
    """The entries of corpus/manifest.json: {"files": [{"file": "files/x.pdf", "format": "pdf", ...}]}."""
    raw = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    entries = []
    for item in raw["files"]:
        title = item.get("title")
        entries.append(
            Entry(
                path=corpus / item["file"],
                format=item["format"],
                language=item.get("language") or "und",
                titles=[title] if isinstance(title, str) else list(title or []),
                phrases=list(item.get("phrases") or []),
                absent_phrases=list(item.get("absent_phrases") or []),
                scan=bool(item.get("scan")),
                expect=item.get("expect", "store"),
                expect_reason=item.get("expect_reason"),
                reference=dict(item.get("reference") or {}),
                source=dict(item.get("source") or {}),
            )
        )
    return entries


# --- reference texts ---------------------------------------------------------------------------


@dataclass
class Reference:
    text: str | None
    tool: str
    # Why there is no text (the tool is missing, or could not read the file).
    missing: str | None = None


def pdftotext_version() -> str | None:
    if shutil.which("pdftotext") is None:
        return None
    done = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True, check=False)
    first = (done.stderr or done.stdout).splitlines()
    return first[0] if first else "pdftotext"


def reference_for(entry: Entry, data: bytes, corpus: Path) -> Reference:
    kind = entry.reference.get("kind") or AUTO_REFERENCE.get(entry.format, "none")
    if kind == "file" and not entry.reference.get("path"):
        return Reference(None, "none", "no reference text in the manifest")
    reader = _READERS.get(kind)
    if reader is None:
        return Reference(None, "none", "no reference for this format")
    try:
        return reader(entry, data, corpus)
    except Exception as exc:  # noqa: BLE001 - a reference that cannot be read only skips the metric
        return Reference(None, kind, f"the reference reader failed: {type(exc).__name__}: {exc}"[:200])


def _pdftotext(entry: Entry, data: bytes, corpus: Path) -> Reference:
    if shutil.which("pdftotext") is None:
        return Reference(None, "pdftotext", "pdftotext (poppler-utils) is not installed")
    done = subprocess.run(
        ["pdftotext", "-q", "-enc", "UTF-8", "-", "-"],
        input=data,
        capture_output=True,
        timeout=REFERENCE_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        return Reference(None, "pdftotext", f"pdftotext could not read it (exit {done.returncode})")
    return Reference(done.stdout.decode("utf-8", "replace"), "pdftotext")


def _file(entry: Entry, data: bytes, corpus: Path) -> Reference:
    return Reference((corpus / entry.reference["path"]).read_text(encoding="utf-8"), "manifest text")


def _text(entry: Entry, data: bytes, corpus: Path) -> Reference:
    encoding = entry.reference.get("encoding") or "utf-8-sig"
    return Reference(data.decode(encoding), f"decoded as {encoding}")


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _xml(archive: zipfile.ZipFile, name: str):
    from lxml import etree

    if archive.getinfo(name).file_size > MAX_REFERENCE_PART_BYTES:
        raise ValueError(f"{name} is too large to read for the reference")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, recover=True)
    root = etree.fromstring(archive.read(name), parser=parser)
    # Word and PowerPoint store a text box twice (DrawingML, and a VML fallback): count it once.
    for fallback in [el for el in root.iter() if _local(el.tag) == "Fallback"]:
        fallback.getparent().remove(fallback)
    return root


def _runs(root, text_tag: str, block_tag: str) -> str:
    """Text of every `text_tag` element, each block (`block_tag`) on a line of its own. A block inside a
    block (a text box's paragraphs inside the paragraph that anchors it) gets its own line, not its
    parent's. Namespaces are ignored, so Strict Open XML reads like the transitional kind."""
    lines: dict = {}
    for el in root.iter():
        if _local(el.tag) == text_tag:
            block = next((a for a in el.iterancestors() if _local(a.tag) == block_tag), None)
            lines.setdefault(block, []).append(el.text or "")
    return "\n".join(line for line in ("".join(parts) for parts in lines.values()) if line.strip())


def _ooxml(entry: Entry, data: bytes, corpus: Path) -> Reference:
    with zipfile.ZipFile(_bytes_io(data)) as archive:
        names = archive.namelist()
        parts: list[str] = []
        if "word/document.xml" in names:
            wanted = re.compile(r"word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$")
            for name in sorted(n for n in names if wanted.match(n)):
                parts.append(_runs(_xml(archive, name), "t", "p"))
        elif any(n.startswith("ppt/slides/") for n in names):
            wanted = re.compile(r"ppt/(slides/slide|notesSlides/notesSlide)(\d+)\.xml$")
            for name in sorted((n for n in names if wanted.match(n)), key=_slide_order):
                parts.append(_runs(_xml(archive, name), "t", "p"))
        elif "xl/workbook.xml" in names:
            parts.append(_sheets(archive, names))
        else:
            raise ValueError("not a Word, PowerPoint or Excel package")
    return Reference("\n".join(parts), "Office XML text (lxml)")


def _slide_order(name: str) -> tuple[int, int]:
    number = int(re.search(r"(\d+)\.xml$", name).group(1))
    return number, 1 if "notesSlide" in name else 0


def _sheets(archive: zipfile.ZipFile, names: list[str]) -> str:
    shared: list[str] = []
    if "xl/sharedStrings.xml" in names:
        root = _xml(archive, "xl/sharedStrings.xml")
        shared = [
            "".join(el.text or "" for el in si.iter() if _local(el.tag) == "t") for si in root if _local(si.tag) == "si"
        ]
    rows = []
    for name in sorted(n for n in names if re.match(r"xl/worksheets/sheet\d+\.xml$", n)):
        for row in _xml(archive, name).iter():
            if _local(row.tag) == "row":
                cells = [text for cell in row if _local(cell.tag) == "c" and (text := _cell(cell, shared)) is not None]
                if cells:
                    rows.append("\t".join(cells))
    return "\n".join(rows)


def _cell(cell, shared: list[str]) -> str | None:
    """A cell's shown text: its shared string, inline string, or stored value (numbers, and the cached
    result of a formula)."""
    kind = cell.get("t")
    if kind == "inlineStr":
        return "".join(el.text or "" for el in cell.iter() if _local(el.tag) == "t")
    value = next((el.text for el in cell if _local(el.tag) == "v"), None)
    if kind == "s" and value is not None:
        index = int(value) if value.strip().isdigit() else -1
        return shared[index] if 0 <= index < len(shared) else None
    return value


def _odf(entry: Entry, data: bytes, corpus: Path) -> Reference:
    with zipfile.ZipFile(_bytes_io(data)) as archive:
        root = _xml(archive, "content.xml")
    body = next((el for el in root.iter() if _local(el.tag) == "body"), root)
    lines = []
    for el in body.iter():
        if _local(el.tag) in {"p", "h"}:
            line = "".join(el.itertext())
            if line.strip():
                lines.append(line)
    return Reference("\n".join(lines), "OpenDocument XML text (lxml)")


def _html_text(markup: bytes, encoding: str | None = None) -> str:
    import lxml.html

    parser = lxml.html.HTMLParser(encoding=encoding) if encoding else None
    doc = lxml.html.document_fromstring(markup, parser=parser)
    for el in doc.iter("script", "style", "noscript", "template", "svg"):
        el.drop_tree()
    body = doc.find("body")
    return (body if body is not None else doc).text_content()


def _html(entry: Entry, data: bytes, corpus: Path) -> Reference:
    return Reference(
        _html_text(data, entry.reference.get("encoding")),
        "lxml text of the page body (navigation included)",
    )


def _epub(entry: Entry, data: bytes, corpus: Path) -> Reference:
    from lxml import etree

    with zipfile.ZipFile(_bytes_io(data)) as archive:
        container = _xml(archive, "META-INF/container.xml")
        opf_name = next(el.get("full-path") for el in container.iter() if _local(el.tag) == "rootfile")
        opf = _xml(archive, opf_name)
        base = PurePosixPath(opf_name).parent
        items = {el.get("id"): el.get("href") for el in opf.iter() if _local(el.tag) == "item"}
        spine = [
            items[el.get("idref")] for el in opf.iter() if _local(el.tag) == "itemref" and el.get("idref") in items
        ]
        texts = []
        for href in spine:
            name = str(base / href) if str(base) != "." else href
            try:
                texts.append(_html_text(archive.read(name)))
            except (KeyError, etree.ParserError):
                continue
    return Reference("\n".join(texts), "EPUB spine XHTML text (lxml)")


def _email(entry: Entry, data: bytes, corpus: Path) -> Reference:
    message = email.message_from_bytes(data, policy=email.policy.default)
    parts = [str(message.get("subject") or "")]
    for part in message.walk():
        if part.get_content_maintype() == "text" and not part.is_attachment():
            content = part.get_content()
            parts.append(_html_text(content.encode()) if part.get_content_subtype() == "html" else content)
    return Reference("\n".join(parts), "Python's email package")


def _bytes_io(data: bytes):
    import io

    return io.BytesIO(data)


_READERS = {
    "pdftotext": _pdftotext,
    "file": _file,
    "text": _text,
    "ooxml": _ooxml,
    "odf": _odf,
    "html": _html,
    "epub": _epub,
    "email": _email,
}


# --- measures ----------------------------------------------------------------------------------


def fold(text: str) -> str:
    """Compatibility forms and case folded, whitespace collapsed: how text is compared."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def trigrams(text: str) -> Counter:
    """The multiset of 3-grams of the text's letters and digits, after NFKC and case folding; spaces,
    punctuation and line breaks are dropped first, so layout, hyphenation and column order change
    only the few grams that span a break."""
    stream = "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())
    return Counter(stream[i : i + 3] for i in range(len(stream) - 2))


def recall(reference: str, text: str) -> float | None:
    """Share of the reference's 3-grams (with their counts) that the text holds; None when the
    reference has no letters to compare."""
    wanted = trigrams(reference)
    total = sum(wanted.values())
    if not total:
        return None
    got = trigrams(text)
    return sum(min(count, got[gram]) for gram, count in wanted.items()) / total


def alnum_chars(text: str) -> int:
    return sum(1 for ch in unicodedata.normalize("NFKC", text) if ch.isalnum())


# Characters that must never be stored, by kind. Each pattern's matches are counted in characters.
JUNK_PATTERNS = {
    "ligature": re.compile("[\ufb00-\ufb06]"),
    "control": re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]"),
    "replacement": re.compile("\ufffd"),
    "private_use": re.compile("[\ue000-\uf8ff]"),
    "glyph_name": re.compile(r"/g\d{1,5}(?!\d)|\(cid:\d+\)|/uni[0-9A-Fa-f]{4,6}|glyph<[^>]{0,40}>"),
    # UTF-8 read as Latin-1/cp1252 ("Ã©", "â€™", "Ð°"), and cp1251 read as cp1252: a word of four or
    # more letters all from U+00C0-U+00FF ("Êîìïàíèÿ"), which no Western European word is.
    "mojibake": re.compile(
        "[ÃÂ][\u0080-\u00bf]|â€.|[ÐÑ][\u0080-\u00bf‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ]"
        r"|(?<![^\W\d_])[À-ÖØ-öø-ÿ]{4,}(?![^\W\d_])"
    ),
    # An embedded binary written out as hex (RTF objects and pictures), 128 digits or more.
    "hex_dump": re.compile(r"(?:[0-9A-Fa-f]{32,}\s*){4,}"),
}
# Reported, not counted as junk: ZWJ/ZWNJ (U+200C/D) are needed in Persian and Indic scripts.
FORMAT_CHARS = re.compile("[\u00ad\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
HYPHEN_BREAK = re.compile(r"[^\W\d_]-\n[^\W\d_]")


def junk(text: str) -> dict[str, int]:
    counts = {kind: sum(len(m) for m in pattern.findall(text)) for kind, pattern in JUNK_PATTERNS.items()}
    counts["total"] = sum(counts.values())
    return counts


# A Python exception's name in a message meant for a person ("... (KeyError)").
EXCEPTION_NAME = re.compile(r"\b(?:[A-Z][A-Za-z]*(?:Error|Exception|Warning)|StopIteration|KeyboardInterrupt)\b")


def title_matches(title: str | None, declared: list[str]) -> bool:
    if not title:
        return False
    got = fold(title).strip(" \"'“”«»")
    return any(got == fold(want).strip(" \"'“”«»") for want in declared)


def phrases_found(text: str, phrases: list[str]) -> int:
    folded = fold(text)
    return sum(1 for phrase in phrases if fold(phrase) in folded)
