"""A title a document declares is kept when it is a real one, never when a program wrote a placeholder;
a prose document without one is titled by the heading line it opens with."""

from __future__ import annotations

import pytest

from memories.parsers.titles import MAX_TITLE_CHARS, declared_title, heading_title, opening_heading


@pytest.mark.parametrize(
    "placeholder",
    [
        "",
        "   ",
        None,
        42,
        "Untitled",
        "Untitled 1",
        "Document1",
        "Microsoft Word - plan.doc",
        "PowerPoint Presentation",
        "Book1",
        "Sheet1",
        "Slide 1",
        "report.docx",
        "---",
    ],
)
def test_placeholders_are_no_title(placeholder):
    assert declared_title(placeholder) is None


def test_a_real_title_is_kept_with_its_whitespace_collapsed_and_cut_to_length():
    assert declared_title("  Quarterly\n plan  ") == "Quarterly plan"
    assert declared_title("Компания Аскат") == "Компания Аскат"
    assert len(declared_title("word " * 200)) <= MAX_TITLE_CHARS


@pytest.mark.parametrize(
    "line",
    [
        "La creación",
        "US Trustee Handbook",
        "JEAN-BAPTISTE POQUELIN MOLIÈRE",
        "Chapter 1: The Beginning",
        "Windows 11 review",
        "Москва",
        "東京の天気",
    ],
)
def test_a_short_line_that_is_no_sentence_is_a_heading(line):
    assert heading_title(line) == line


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   ",
        None,
        "In the beginning God created the heaven and the earth.",
        "Did it rain?",
        "Dear Alice,",
        "Name:",
        "Signature of the applicant:",
        "東京は晴れです。",
        "one two three four five six seven eight nine ten eleven twelve thirteen",
        "A" * 101,
        "7 December 2026",
        "Dec. 7, 2026",
        "Lundi 15 janvier 1622",
        "2026-12-07",
        "08.04.2015 12:46",
        "42",
        "1 250,00 €",
        "CHAPTER 1",
        "Annexe B",
        "- first item",
        "# Notes",
        "Name ______________",
        "☐ Married",
        "https://example.com/report",
        "alice@example.com",
        "Untitled",
        "Title\nrunning on",
    ],
)
def test_sentences_long_paragraphs_dates_numbers_and_labels_are_no_heading(line):
    assert heading_title(line) is None


def test_a_paragraph_styled_as_a_heading_is_one_even_when_long_or_a_sentence():
    long = "The river survey of the upper valley, with the depths measured twice in May and June."
    assert heading_title(long, styled=True) == long
    assert heading_title(long) is None
    assert heading_title("Untitled", styled=True) is None, "a placeholder stays no title"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("La creación\n\n1 En el principio creó Dios los cielos y la tierra.", "La creación"),
        ("La creación\r\n\r\n1 En el principio creó Dios los cielos y la tierra.", "La creación"),
        ("\ufeffReport\n\nBody.", "Report"),
        ("\nLa creación\n\n1 En el principio creó Dios.", None),
        ("La creación\n1 En el principio creó Dios.", None),
        ("La creación\n\n", None),
        ("La creación", None),
        ("In the beginning.\n\nMore.", None),
    ],
)
def test_plain_text_opens_with_a_heading_only_on_a_first_line_standing_alone(text, title):
    assert opening_heading(text) == title
