"""A title a document declares is kept when it is a real one, never when a program wrote a placeholder."""

from __future__ import annotations

import pytest

from memories.parsers.titles import MAX_TITLE_CHARS, declared_title


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
