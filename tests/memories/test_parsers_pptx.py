"""PowerPoint .pptx: slides with their titles, text, tables, groups and notes; the title of the deck;
and the same refusals as every Office file."""

from __future__ import annotations

import re

import pytest

from memories.parsers import DecompressionBombError, ExtractionError, extract
from tests.memories.office_files import encrypted, make_pptx, strict, with_bomb


def test_each_slide_reads_as_its_title_text_tables_and_notes():
    text = extract("deck.pptx", make_pptx()).text
    assert text.startswith("## Slide 1: Roadmap 2027\n\nShip the sync engine\nHire two engineers")
    assert "Notes: Mention the budget freeze." in text
    assert "## Slide 2: Costs\n\nItem | Cost\nServers | 1200" in text
    assert "Grouped remark" in text
    assert text.index("Notes: Mention") < text.index("## Slide 2")


def test_the_title_is_the_core_title_else_the_first_slides():
    assert extract("deck.pptx", make_pptx()).title == "Roadmap 2027"
    assert extract("deck.pptx", make_pptx(core_title="Board update, May")).title == "Board update, May"
    assert extract("deck.pptx", make_pptx(core_title="PowerPoint Presentation")).title == "Roadmap 2027"


def test_a_strict_pptx_is_read():
    assert extract("deck.pptx", strict(make_pptx())).text == extract("deck.pptx", make_pptx()).text


def test_a_pptx_zip_bomb_is_refused_with_413():
    with pytest.raises(DecompressionBombError, match="zip bomb") as caught:
        extract("bomb.pptx", with_bomb(make_pptx(), "ppt/slides/slide1.xml"))
    assert caught.value.status == 413


def test_images_and_media_are_never_inflated():
    # A 30 MB "picture" would spend the file's budget if it were inflated; it is carried empty.
    assert "Roadmap 2027" in extract("deck.pptx", with_bomb(make_pptx(), "docProps/thumbnail.jpeg")).text


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (encrypted(make_pptx()), "password-protected"),
        (make_pptx()[:5000], "damaged or cut short"),
        (with_bomb(make_pptx(), "ppt/presentation.xml", inflated_mb=0), "damaged and cannot be read"),
    ],
    ids=["encrypted", "truncated", "broken"],
)
def test_files_that_cannot_be_read_get_a_reason(data, reason):
    with pytest.raises(ExtractionError, match=re.escape(reason)) as caught:
        extract("deck.pptx", data)
    assert "Error" not in str(caught.value)
