"""Word .docx: every place text lives (body, tables, text boxes, headers, footers, footnotes, endnotes),
Strict Open XML read as Transitional, the document's own title, and refusals in words."""

from __future__ import annotations

import io
import re
import zipfile

import pytest

from bench import bombs
from memories.parsers import DecompressionBombError, ExtractionError, extract
from tests.files import make_docx as make_plain_docx
from tests.memories.office_files import (
    docx_p,
    docx_table,
    docx_text_box,
    encrypted,
    make_docx,
    strict,
    with_bomb,
)


def rich_docx(**extra) -> bytes:
    body = (
        docx_p("Field report", "Title")
        + docx_p("Findings", "Heading1")
        + docx_p("The anchor paragraph.", extra=docx_text_box("Boxed insight about the pumps"))
        + docx_p("Pump one", "ListBullet")
        + docx_table([["Site", "Flow"], ["North", "12"]], merged_first=False)
        + docx_p("Later chapter", "Chapter")
        + docx_p("Closing words.")
    )
    return make_docx(
        body,
        header="Acme Water confidential",
        footer="Page footer text",
        footnote="A footnote about the flow meter",
        endnote="An endnote about the source",
        **extra,
    )


def test_text_boxes_headers_footers_and_notes_are_read_in_document_order():
    text = extract("report.docx", rich_docx()).text
    order = [
        "Acme Water confidential",
        "# Field report",
        "# Findings",
        "The anchor paragraph.",
        "Boxed insight about the pumps",
        "- Pump one",
        "Site | Flow\nNorth | 12",
        "# Later chapter",  # a style based on Heading 1 is a heading
        "Closing words.",
        "A footnote about the flow meter",
        "An endnote about the source",
        "Page footer text",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)


def test_a_text_box_is_read_once_though_word_stores_it_twice():
    text = extract("box.docx", make_docx(docx_p("", extra=docx_text_box("Only in a box")))).text
    assert text == "Only in a box"


def test_a_merged_cell_is_read_once():
    text = extract("t.docx", make_docx(docx_table([["Wide heading", "Right"], ["a", "b"]], merged_first=True))).text
    assert text == "Wide heading | Right\na | b"


def test_the_title_comes_from_the_core_properties_when_it_is_a_real_one():
    assert extract("r.docx", rich_docx(title="Pump Station Field Report")).title == "Pump Station Field Report"
    # A placeholder a program wrote there is no title: the Title paragraph is.
    assert extract("r.docx", rich_docx(title="Microsoft Word - report.doc")).title == "Field report"


def test_without_a_title_paragraph_the_first_heading_1_is_the_title():
    assert extract("plan.docx", make_plain_docx()).title == "Quarterly plan"
    assert extract("plain.docx", make_docx(docx_p("Just a paragraph."))).title is None


def test_a_strict_open_xml_docx_is_read_like_a_transitional_one():
    transitional = extract("report.docx", rich_docx(title="Strict report"))
    document = zipfile.ZipFile(io.BytesIO(strict(rich_docx()))).read("word/document.xml")
    assert b"purl.oclc.org/ooxml/wordprocessingml/main" in document
    result = extract("strict.docx", strict(rich_docx(title="Strict report")))
    assert result.text == transitional.text and result.title == "Strict report"
    assert extract("plan.docx", strict(make_plain_docx())).text == extract("plan.docx", make_plain_docx()).text


def test_a_password_protected_docx_is_refused_as_password_protected():
    with pytest.raises(ExtractionError, match="password-protected") as caught:
        extract("secret.docx", encrypted(make_plain_docx()))
    assert caught.value.status == 422


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (make_plain_docx()[:700], "damaged or cut short"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "older Office file"),
    ],
    ids=["truncated", "ole"],
)
def test_a_file_that_is_not_what_its_name_says_gets_a_clear_reason(data, reason):
    with pytest.raises(ExtractionError, match=re.escape(reason)):
        extract("named.docx", data)


def test_zero_bytes_is_an_empty_file():
    with pytest.raises(ExtractionError, match="the file is empty"):
        extract("empty.docx", b"")


def test_a_missing_part_or_broken_xml_is_damaged_in_words_never_an_exception_name():
    broken = with_bomb(make_plain_docx(), "word/document.xml", inflated_mb=0)  # "<x>...</x>": no w:document
    for data in (broken, make_docx("<w:p><w:r><w:t>unclosed")):
        with pytest.raises(ExtractionError) as caught:
            extract("broken.docx", data)
        message = str(caught.value)
        assert ".docx" in message and not any(name in message for name in ("KeyError", "Error", "Exception"))


def test_a_docx_bomb_is_refused_with_413_before_it_is_inflated():
    for data in (bombs.docx_bomb(inflated_mb=30), with_bomb(make_plain_docx(), "word/styles.xml")):
        with pytest.raises(DecompressionBombError, match="zip bomb") as caught:
            extract("bomb.docx", data)
        assert caught.value.status == 413


def test_without_a_declared_title_the_heading_line_the_body_opens_with_is_the_title():
    body = docx_p("") + docx_p("Pump station handbook") + docx_p("How we run it.") + docx_p("Scope", "Heading1")
    result = extract("handbook.docx", make_docx(body, header="Acme Water"))
    assert result.title == "Pump station handbook", "before the Heading 1 further on, and not the page header"
    assert result.text.startswith("Acme Water\n\nPump station handbook\n\nHow we run it.")
    long_heading = "The pump stations of the upper valley, how they are run, and what to do when one of them fails"
    styled = make_docx(docx_p(long_heading, "Heading2") + docx_p("Text."))
    assert extract("h.docx", styled).title == long_heading, "a heading style makes a heading whatever its length"
    # A body opening with prose, a part's number or a table has no heading line.
    assert extract("p.docx", make_docx(docx_p("We run the pumps.") + docx_p("Scope", "Heading1"))).title == "Scope"
    assert extract("c.docx", make_docx(docx_p("CHAPTER 1") + docx_p("Text."))).title is None
    tabled = make_docx(docx_table([["Pump", "State"]]) + docx_p("Pump station handbook"))
    assert extract("t.docx", tabled).title is None
    # Nor has one that opens with a list item, in a list style or numbered.
    listed = make_docx(docx_p("Check the pressure gauge", "ListBullet") + docx_p("Then the valves."))
    assert extract("l.docx", listed).title is None
    numbered = (
        '<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>'
        "<w:r><w:t>Check the pressure gauge</w:t></w:r></w:p>"
    )
    assert extract("n.docx", make_docx(numbered + docx_p("Then the valves."))).title is None
