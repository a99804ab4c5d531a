"""What the Office Open XML formats (.docx, .xlsx, .pptx) share: a password-protected or legacy binary
file refused in words, Strict Open XML read as Transitional, the package's relationships, and the
title in its core properties."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote

from memories.parsers import ole
from memories.parsers.bounded_zip import DocumentArchive
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.titles import declared_title
from memories.parsers.xmltree import parse_xml

DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_PACKAGE_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_LEGACY = (
    ("worddocument", "a legacy Word .doc file", ".doc"),
    ("workbook", "a legacy Excel .xls workbook, which is not read", ""),
    ("book", "a legacy Excel .xls workbook, which is not read", ""),
    ("powerpoint document", "a legacy PowerPoint .ppt presentation, which is not read", ""),
)
# Each kind of package by the folder of its main part, for a file whose name says another kind.
_KINDS = {"word": "a Word document (.docx)", "xl": "an Excel workbook (.xlsx)", "ppt": "a PowerPoint file (.pptx)"}


def open_package(data: bytes, *, what: str, budget: InflateBudget, max_inflated: int) -> DocumentArchive:
    """The package's zip, within the file's decompression limit; an OLE file in its place is refused
    as what it is: password-protected (Office encrypts a package inside one), or a legacy binary file."""
    if ole.is_ole(data):
        names = ole.stream_names(data)
        if ole.is_encrypted_office(names):
            raise ExtractionError(
                f"this {what} is password-protected and cannot be read; save a copy without the password"
            )
        for stream, kind, rename in _LEGACY:
            if stream in names:
                hint = f"; rename it to {rename}" if rename else ""
                raise ExtractionError(f"this is not a {what} file: it is {kind}{hint}")
        raise ExtractionError(f"this is not a valid {what} file (it is an older Office file, not a zip archive)")
    return DocumentArchive(data, what=what, budget=budget, max_inflated=max_inflated)


_STRICT = re.compile(rb"http://purl\.oclc\.org/ooxml/(\w+)/(\w+)(/\w+)?")
_RENAMED = {b"extendedProperties": b"extended-properties", b"customProperties": b"custom-properties"}


def transitional(xml: bytes) -> bytes:
    """A Strict Open XML part in Transitional's namespaces and relationship types (ECMA-376 names the
    same things under two roots), so one reader reads both."""
    if b"purl.oclc.org/ooxml/" not in xml:
        return xml

    def one(match: re.Match) -> bytes:
        group, name, rest = match.group(1), match.group(2), match.group(3) or b""
        if rest:
            rest = b"/" + _RENAMED.get(rest[1:], rest[1:])
        return b"http://schemas.openxmlformats.org/" + group + b"/2006/" + _RENAMED.get(name, name) + rest

    return _STRICT.sub(one, xml)


def is_xml_part(name: str) -> bool:
    """Parts a library parses; the others (images, fonts, embedded files) it only carries."""
    return name.lower().endswith((".xml", ".rels"))


def part_xml(archive: DocumentArchive, name: str):
    """The parsed part (Strict read as Transitional), or None when the package has no such part."""
    data = archive.read(name)
    if data is None:
        return None
    return parse_xml(transitional(data), what=archive.what, part=name)


@dataclass(frozen=True)
class Relationship:
    kind: str  # the last segment of its type: "officeDocument", "header", "slide", "core-properties"
    target: str  # the part it points to, as a member name
    id: str


def relationships(archive: DocumentArchive, part: str = "") -> list[Relationship]:
    """The relationships of `part` ("" for the package's own), external targets left out."""
    folder, base = posixpath.split(part)
    rels = part_xml(archive, posixpath.join(folder, "_rels", base + ".rels"))
    if rels is None:
        return []
    found = []
    for element in rels.iter(_PACKAGE_RELS):
        if element.get("TargetMode") == "External" or not element.get("Target"):
            continue
        target = unquote(element.get("Target", ""))
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
        found.append(
            Relationship(
                kind=element.get("Type", "").rsplit("/", 1)[-1],
                target=posixpath.normpath(path).lstrip("/"),
                id=element.get("Id", ""),
            )
        )
    return found


def main_part(archive: DocumentArchive, *, folder: str, default: str) -> str:
    """The package's main part (its officeDocument relationship, else `default`), refused when it is
    missing or is another kind of package's (a .xlsx named .docx, say)."""
    target = next((r.target for r in relationships(archive) if r.kind == "officeDocument"), default)
    if archive.find(target) is None:
        target = default
    if archive.find(target) is None:
        raise ExtractionError(f"this is not a valid {archive.what} file (no {default} inside)")
    top = target.split("/", 1)[0]
    if top != folder and top in _KINDS:
        raise ExtractionError(f"this is not a {archive.what} file: it is {_KINDS[top]}; rename it")
    return archive.find(target) or target


def core_title(archive: DocumentArchive) -> str | None:
    """The title in the core properties (dc:title), when it is a real title."""
    name = next((r.target for r in relationships(archive) if r.kind == "core-properties"), "docProps/core.xml")
    core = part_xml(archive, name)
    if core is None:
        return None
    element = next(core.iter(DC_TITLE), None)
    return declared_title("".join(element.itertext())) if element is not None else None


def damaged(what: str, exc: Exception) -> ExtractionError:
    """A library's failure on a damaged file, in words rather than the exception's name."""
    reason = {
        "KeyError": "a part it refers to is missing",
        "XMLSyntaxError": "a part of it is not well-formed XML",
        "ParseError": "a part of it is not well-formed XML",
    }.get(type(exc).__name__, "")
    return ExtractionError(f"the {what} is damaged and cannot be read" + (f" ({reason})" if reason else ""))
