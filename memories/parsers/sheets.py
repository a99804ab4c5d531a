"""Spreadsheets as text: each sheet as "Sheet: name" then its rows, cells joined by " | ", within one
bound on the cells read from a file (KYBERNESIS_MAX_SHEET_CELLS), past which a notice says what was cut."""

from __future__ import annotations

import datetime
from collections.abc import Iterable

DEFAULT_MAX_CELLS = 100_000
# Excel's own limit on one cell's text; a longer one is cut (a shared string can be referred to by every
# cell, so the text of a sheet is bounded by what it shows, not by the size of its file).
MAX_CELL_CHARS = 32_767
# Cells looked at, empty ones included, for each cell that may be kept: a bound on time for a sheet of
# mostly empty cells (a row whose one value is in its last column is 16,384 cells wide).
SCAN_FACTOR = 10


def max_cells() -> int:
    from django.conf import settings

    return int(getattr(settings, "KYBERNESIS_MAX_SHEET_CELLS", DEFAULT_MAX_CELLS))


def _text_bound(max_inflated: int) -> tuple[int, str]:
    """The most characters of text one file's sheets give, and the setting that says so: the file's
    decompression limit, or less when a memory holds less (past it the memory would be refused whole)."""
    from django.conf import settings

    memory = getattr(settings, "KYBERNESIS_MAX_MEMORY_CHARS", None)
    if isinstance(memory, int) and 0 < memory < max_inflated:
        return memory, "KYBERNESIS_MAX_MEMORY_CHARS"
    return max_inflated, "KYBERNESIS_MAX_INFLATED_BYTES"


def cell_text(value: object) -> str:
    """A cell's value as it reads: whole numbers without ".0", dates without a midnight time, its text
    on one line and at most MAX_CELL_CHARS long."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else str(value)
    if isinstance(value, datetime.datetime):
        if value.time() == datetime.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return " ".join(str(value)[: MAX_CELL_CHARS * 2].split())[:MAX_CELL_CHARS]


class Sheets:
    """The text of a file's sheets, added one by one until the cell bound, or the bound on text (see
    _text_bound; `max_inflated` is the file's decompression limit), is reached."""

    def __init__(self, *, max_inflated: int, limit: int | None = None):
        self.limit = max_cells() if limit is None else limit
        self.max_chars, self.chars_setting = _text_bound(max_inflated)
        self.chars = 0
        self.kept = 0
        self.scanned = 0
        self.blocks: list[str] = []
        self.cut: tuple[str | None, int] | None = None  # the sheet and the last row read, when cut
        self.left_out: list[str] = []
        self.cut_by_chars = False

    @property
    def full(self) -> bool:
        return self.cut is not None

    def add(self, name: str | None, rows: Iterable[tuple[int, Iterable[object]]]) -> None:
        """One sheet (`name` None for a file of one, such as a CSV): its rows as (row number, values)."""
        if self.cut is not None:
            if name is not None:
                self.left_out.append(name)
            return
        kept_rows: list[list[str]] = []
        last = 0
        for number, values in rows:
            cells = []
            for value in values:
                self.scanned += 1
                cells.append(cell_text(value))
                if self.scanned > self.limit * SCAN_FACTOR:
                    break
            while cells and not cells[-1]:
                cells.pop()
            filled = sum(1 for cell in cells if cell)
            line = " | ".join(cells) if filled else ""
            if self.kept + filled > self.limit or self.scanned > self.limit * SCAN_FACTOR:
                self.cut = (name, last)
                break
            if self.chars + len(line) > self.max_chars:
                self.cut, self.cut_by_chars = (name, last), True
                break
            self.kept += filled
            self.chars += len(line) + 1
            last = number
            if line:
                kept_rows.append(cells)
        if kept_rows:
            # Columns empty in every row of the sheet (a table that starts in column B) are left out.
            lead = min(next(i for i, cell in enumerate(cells) if cell) for cells in kept_rows)
            lines = [" | ".join(cells[lead:]) for cells in kept_rows]
            self.blocks.append("\n".join(([f"Sheet: {name}"] if name is not None else []) + lines))

    def text(self) -> str:
        return "\n\n".join(self.blocks)

    def notices(self) -> list[str]:
        if self.cut is None:
            return []
        name, row = self.cut
        where = f"the sheet {name!r}" if name is not None else "the file"
        bound = (
            f"{self.max_chars:,} characters of text ({self.chars_setting})"
            if self.cut_by_chars
            else f"{self.limit:,} cells (KYBERNESIS_MAX_SHEET_CELLS)"
        )
        notice = f"{where} was cut after row {row:,}: at most {bound} are read from one file"
        if self.left_out:
            shown = ", ".join(repr(sheet) for sheet in self.left_out[:10])
            more = f" and {len(self.left_out) - 10:,} more" if len(self.left_out) > 10 else ""
            notice += f"; later sheets not read: {shown}{more}"
        return [notice]
