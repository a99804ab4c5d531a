"""CSV and TSV: rows as cells joined by " | " (memories.parsers.sheets), the delimiter found from the first
lines, read within the cell bound, so a file of millions of cells costs only the cells kept."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from memories.parsers import sheets
from memories.parsers.budget import InflateBudget
from memories.parsers.format import Format, Parsed
from memories.parsers.text import decode

_DELIMITERS = (",", ";", "\t", "|")


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    text = decode(data)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter(text[:65536]))
    problems: list[str] = []
    book = sheets.Sheets(max_inflated=max_inflated)
    book.add(None, _rows(reader, problems))
    return Parsed(text=book.text(), notices=book.notices() + problems)


def delimiter(sample: str) -> str:
    """The candidate found the same, non-zero number of times on the most of the first lines (quoted
    text aside); a comma when none is."""
    lines = [line for line in sample.splitlines()[:50] if line.strip()][:-1] or sample.splitlines()[:1]
    best, best_score = ",", 0
    for candidate in _DELIMITERS:
        counts = [_unquoted(line).count(candidate) for line in lines]
        if not counts or min(counts) == 0:
            continue
        score = min(counts) * 2 + (1 if len(set(counts)) == 1 else 0)
        if score > best_score:
            best, best_score = candidate, score
    return best


def _unquoted(line: str) -> str:
    return "".join(part for index, part in enumerate(line.split('"')) if index % 2 == 0)


def _rows(reader, problems: list[str]) -> Iterator[tuple[int, list[str]]]:
    number = 0
    try:
        for number, row in enumerate(reader, start=1):
            yield number, row
    except csv.Error:
        problems.append(f"the file was read up to row {number:,}; the rest is not well-formed CSV")


FORMAT = Format(
    extensions=frozenset({"csv", "tsv"}),
    parse=parse,
    media_types={"csv": "text/csv", "tsv": "text/tab-separated-values"},
)
