"""Spreadsheets (.xlsx, .ods, .csv) as readable rows: "Sheet: name", cells joined by " | ", within one
bound on cells (KYBERNESIS_MAX_SHEET_CELLS) and one on text, past which a notice says what was cut."""

from __future__ import annotations

import datetime
import re

import pytest

from memories.parsers import DecompressionBombError, ExtractionError, extract
from memories.parsers.csv import delimiter
from tests.memories.office_files import encrypted, make_odf, make_xlsx, strict, with_bomb

BUDGET = {
    "Budget": [["Item", "Cost", "Due"], ["Servers", 1200, datetime.datetime(2027, 1, 5)], ["Rate", 0.25, None]],
    "Notes": [[None, None, "far right"], [], ["=SUM(B2:B3)"]],
}


def test_xlsx_sheets_read_as_rows_with_their_names():
    result = extract("budget.xlsx", make_xlsx(BUDGET, title="Budget 2027"))
    assert result.text == (
        "Sheet: Budget\nItem | Cost | Due\nServers | 1200 | 2027-01-05\nRate | 0.25\n\nSheet: Notes\nfar right"
    )  # a formula with no value computed yet reads as nothing, not as its code
    assert result.title == "Budget 2027" and result.notices == []


def test_columns_empty_in_every_row_of_a_sheet_are_left_out():
    table = {"Squares": [[None, "Number", "Square"], [None, 2, 4], [None, 3, None, None], [None, None, 9]]}
    assert extract("squares.xlsx", make_xlsx(table)).text == "Sheet: Squares\nNumber | Square\n2 | 4\n3\n | 9"


def test_a_strict_xlsx_is_read():
    assert extract("b.xlsx", strict(make_xlsx(BUDGET))).text == extract("b.xlsx", make_xlsx(BUDGET)).text


def test_past_the_cell_bound_a_notice_says_what_was_cut(settings):
    settings.KYBERNESIS_MAX_SHEET_CELLS = 50
    rows = [[f"r{row}c{col}" for col in range(10)] for row in range(1, 21)]
    result = extract("big.xlsx", make_xlsx({"Data": rows, "Later": [["never read"]]}))
    assert result.text.count("\n") == 5 and "r5c9" in result.text and "r6c0" not in result.text
    assert result.notices == [
        "the sheet 'Data' was cut after row 5: at most 50 cells (KYBERNESIS_MAX_SHEET_CELLS) are read from one "
        "file; later sheets not read: 'Later'"
    ]


def test_a_shared_string_repeated_in_every_cell_is_bounded_by_the_text_bound(settings):
    settings.KYBERNESIS_MAX_MEMORY_CHARS = 100_000
    long = "x" * 30_000
    result = extract("repeat.xlsx", make_xlsx({"S": [[long]] * 10}))
    assert len(result.text) <= 100_000 and "KYBERNESIS_MAX_MEMORY_CHARS" in result.notices[0]


def test_an_xlsx_bomb_is_refused_with_413():
    with pytest.raises(DecompressionBombError, match="zip bomb"):
        extract("bomb.xlsx", with_bomb(make_xlsx(BUDGET), "xl/worksheets/sheet1.xml"))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (encrypted(make_xlsx(BUDGET)), "password-protected"),
        (make_xlsx(BUDGET)[:3000], "damaged or cut short"),
    ],
    ids=["encrypted", "truncated"],
)
def test_xlsx_files_that_cannot_be_read_get_a_reason(data, reason):
    with pytest.raises(ExtractionError, match=re.escape(reason)):
        extract("budget.xlsx", data)


def test_csv_rows_read_with_the_delimiter_the_file_uses():
    assert extract("t.csv", b'name;age\nAnna;31\nBo;"4;5"\n').text == "name | age\nAnna | 31\nBo | 4;5"
    assert extract("t.tsv", b"a\tb\n1\t2\n").text == "a | b\n1 | 2"
    assert extract("t.csv", "ville,pays\nZürich,Suisse\n".encode("cp1252")).text == "ville | pays\nZürich | Suisse"
    assert delimiter("one column\nonly\n") == ","


def test_a_csv_of_ten_million_cells_costs_only_the_cells_kept(settings):
    settings.KYBERNESIS_MAX_SHEET_CELLS = 1000
    data = b"1,2,3,4,5,6,7,8,9,10\n" * 1_000_000  # 10,000,000 cells, 21 MB
    result = extract("huge.csv", data)
    assert result.text.count("\n") == 99 and result.notices == [
        "the file was cut after row 100: at most 1,000 cells (KYBERNESIS_MAX_SHEET_CELLS) are read from one file"
    ]


def test_a_csv_that_breaks_off_keeps_what_came_before_with_a_notice():
    result = extract("cut.csv", b'a,b\n1,2\n3,"unclosed' + b"x" * 200_000)
    assert result.text.startswith("a | b\n1 | 2") and "not well-formed CSV" in result.notices[0]


def ods(body: str, **extra) -> bytes:
    return make_odf("spreadsheet", body, **extra)


def test_ods_sheets_read_as_rows_with_repeated_cells_expanded_only_where_they_hold_text():
    body = (
        '<table:table table:name="Plan"><table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell>'
        '<table:table-cell table:number-columns-repeated="2"><text:p>x</text:p></table:table-cell>'
        '<table:table-cell table:number-columns-repeated="16380"/></table:table-row>'
        '<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/>'
        "</table:table-row></table:table>"
    )
    result = extract("plan.ods", ods(body, title="Plan of record"))
    assert result.text == "Sheet: Plan\nItem | x | x" and result.title == "Plan of record"


def test_an_ods_row_repeated_a_million_times_stops_at_the_cell_bound(settings):
    settings.KYBERNESIS_MAX_SHEET_CELLS = 100
    body = (
        '<table:table table:name="Rows"><table:table-row table:number-rows-repeated="1000000">'
        "<table:table-cell><text:p>same</text:p></table:table-cell></table:table-row></table:table>"
    )
    result = extract("rows.ods", ods(body))
    assert result.text.count("same") == 100 and "cut after row 100" in result.notices[0]


def test_an_ods_bomb_and_an_encrypted_ods_are_refused():
    with pytest.raises(DecompressionBombError):
        extract("bomb.ods", with_bomb(ods("<table:table/>"), "content.xml"))
    with pytest.raises(ExtractionError, match="password-protected"):
        extract("locked.ods", ods("", encrypted_content=True))
