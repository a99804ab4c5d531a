"""Excel .xlsx and .xlsm (Transitional or Strict), read by openpyxl in read-only mode from a bounded copy:
each worksheet's rows as cells joined by " | " (memories.parsers.sheets, within the cell bound), the
values a formula last computed, and the title from the core properties."""

from __future__ import annotations

import io
import warnings

from memories.parsers import ooxml, sheets
from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.titles import declared_title


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    archive = ooxml.open_package(data, what=".xlsx", budget=budget, max_inflated=max_inflated)
    ooxml.main_part(archive, folder="xl", default="xl/workbook.xml")
    copy = archive.stored_copy(keep=ooxml.is_xml_part, rewrite=ooxml.transitional)
    import openpyxl

    book = sheets.Sheets(max_inflated=max_inflated)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # openpyxl warns of every extension it does not read
            workbook = openpyxl.load_workbook(io.BytesIO(copy), read_only=True, data_only=True, keep_links=False)
            try:
                for sheet in workbook.worksheets:
                    sheet.reset_dimensions()  # the size a sheet declares is not trusted; its rows are read
                    book.add(sheet.title, enumerate(sheet.iter_rows(values_only=True), start=1))
                title = declared_title(workbook.properties.title)
            finally:
                workbook.close()
    except ExtractionError:
        raise
    except Exception as exc:  # openpyxl raises many kinds on a damaged file; none may reach a person
        raise ooxml.damaged(".xlsx", exc) from exc
    return Parsed(text=book.text(), title=title, notices=book.notices())


FORMAT = Format(
    extensions=frozenset({"xlsx", "xlsm"}),
    parse=parse,
    media_types={
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "xlsm": "application/vnd.ms-excel.sheet.macroEnabled.12",
    },
)
