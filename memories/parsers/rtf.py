"""RTF: the text read by striprtf, with embedded pictures, objects and binary data left out first,
footnotes kept at the end, and the title from the {\\info{\\title ...}} group, else the heading line
the text opens with."""

from __future__ import annotations

import codecs
import re

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.titles import heading_title

# striprtf reads RTF one token at a time in Python (about half a second per MB of text markup), so
# the markup left once embedded objects are out is bounded; a long book is a few MB of it.
MAX_RTF_MARKUP_BYTES = 8 * 1024 * 1024
MAX_TITLE_CHARS = 300
# Groups of embedded data (hex or binary) that hold no text: pictures, OLE objects, Word's data store,
# theme and colour scheme. An embedded object's {\result ...} (its text rendering) is kept.
_EMBEDDED = re.compile(
    r"\{\\(?:\*\\)?(?:pict|objdata|datastore|themedata|colorschememapping|blipuid|fontemb|fontfile)(?![a-z])"
)
_OBJECT = re.compile(r"\{\\object(?![a-z])")
_RESULT = re.compile(r"\{\\(?:\*\\)?result(?![a-z])")
_FOOTNOTE = re.compile(r"\{\\(?:\*\\)?footnote(?![a-z])")
_TITLE = re.compile(r"\{\\title(?![a-z])")
_BRACE = re.compile(r"\\[\\{}]|[{}]")
_BIN = re.compile(rb"(?<!\\)\\bin(\d{1,10}) ?")
_CODEPAGE = re.compile(rb"\\ansicpg(\d{3,5})")


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    from striprtf.striprtf import rtf_to_text

    if not data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        raise ExtractionError("this is not an RTF file (it does not start with {\\rtf)")
    encoding = _encoding(data)
    markup = _without_binary(data).decode(encoding, errors="replace")
    markup, _ = _take_groups(markup, _EMBEDDED)
    markup = _take_groups(markup, _OBJECT, keep=_object_result)[0]
    if len(markup) > MAX_RTF_MARKUP_BYTES:
        raise ExtractionError(
            f"this RTF holds {len(markup):,} characters of markup besides its pictures; "
            f"at most {MAX_RTF_MARKUP_BYTES:,} are read"
        )
    markup, footnotes = _take_groups(markup, _FOOTNOTE)
    _, titles = _take_groups(markup, _TITLE)
    try:
        text = rtf_to_text(markup, encoding=encoding, errors="replace")
        notes = [_fragment(group, encoding) for group in footnotes]
        title = _title(titles, encoding)
    except (ValueError, IndexError, LookupError, RecursionError) as exc:
        raise ExtractionError("the RTF file is damaged and cannot be read") from exc
    notes = [note.strip() for note in notes if note.strip()]
    if notes:
        text = text.rstrip() + "\n\n" + "\n".join(notes)
    return Parsed(text=text, title=title or _first_paragraph_heading(text))


def _first_paragraph_heading(text: str) -> str | None:
    """The heading line the document opens with, when its {\\info} names no title. Every \\par ends a
    paragraph, so each line stands alone; empty paragraphs before it are only spacing."""
    paragraphs = text.lstrip().split("\n", 1)
    if len(paragraphs) < 2 or not paragraphs[1].strip():
        return None
    return heading_title(paragraphs[0])


def _title(groups: list[str], encoding: str) -> str:
    """The first {\\title} that reads as text: a writer may put a legacy copy first whose characters
    its code page could not hold, stored as "?", before the Unicode one."""
    for group in groups:
        title = " ".join(_fragment(group, encoding).split())[:MAX_TITLE_CHARS]
        if any(ch.isalnum() for ch in title):
            return title
    return ""


def _encoding(data: bytes) -> str:
    """The document's ANSI code page (\\ansicpgN), where Python has a codec for it; else Windows-1252."""
    match = _CODEPAGE.search(data[:4096])
    if match:
        name = f"cp{int(match.group(1))}"
        try:
            codecs.lookup(name)
        except LookupError:
            return "cp1252"
        return name
    return "cp1252"


def _without_binary(data: bytes) -> bytes:
    """The bytes without \\binN runs: N raw bytes that would otherwise be read as characters."""
    parts: list[bytes] = []
    position = 0
    while (match := _BIN.search(data, position)) is not None:
        parts.append(data[position : match.start()])
        position = match.end() + int(match.group(1))
    parts.append(data[position:])
    return b"".join(parts)


def _take_groups(markup: str, start: re.Pattern, keep=None) -> tuple[str, list[str]]:
    """The markup without the groups that `start` finds (or with each replaced by what `keep` makes of
    its inside), and the groups' insides. Hex data holds no braces, so finding a group's end skips
    over it in a few steps."""
    kept: list[str] = []
    taken: list[str] = []
    position = 0
    while (match := start.search(markup, position)) is not None:
        kept.append(markup[position : match.start()])
        depth = 1
        end = len(markup)
        for brace in _BRACE.finditer(markup, match.end()):
            token = brace.group()
            if token == "{":
                depth += 1
            elif token == "}":
                depth -= 1
                if depth == 0:
                    end = brace.end()
                    break
        inside = markup[match.end() : max(match.end(), end - 1)]
        taken.append(inside)
        if keep is not None:
            kept.append(keep(inside))
        position = end
    kept.append(markup[position:])
    return "".join(kept), taken


def _object_result(inside: str) -> str:
    """What an embedded object shows as text: its {\\result ...} group (striprtf skips whole objects)."""
    return "".join("{" + result + "}" for result in _take_groups(inside, _RESULT)[1])


def _fragment(inside: str, encoding: str) -> str:
    from striprtf.striprtf import rtf_to_text

    return rtf_to_text("{\\rtf1 " + inside + "}", encoding=encoding, errors="replace")


FORMAT = Format(extensions=frozenset({"rtf"}), parse=parse, media_types={"rtf": "application/rtf"}, name="RTF")
