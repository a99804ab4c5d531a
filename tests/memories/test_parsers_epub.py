"""EPUB e-books: chapters in spine order, the navigation document left out, the book's title; DRM and
bombs refused, a missing chapter noticed."""

from __future__ import annotations

import pytest

from memories.parsers import DecompressionBombError, ExtractionError, extract
from tests.memories.office_files import chapter, make_epub, with_bomb

CHAPTERS = {
    "one.xhtml": chapter("The Start", "It was the best of tests."),
    "two.xhtml": chapter("The Middle", "It was the worst of tests."),
    "three.xhtml": chapter("The End", "Recalled to green."),
}
ENCRYPTION = (
    '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
    'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
    '<enc:EncryptionMethod Algorithm="{algorithm}"/><enc:CipherData>'
    '<enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData></encryption>'
)


def test_chapters_read_in_spine_order_and_the_title_from_the_package():
    result = extract("tale.epub", make_epub(CHAPTERS, spine=["three.xhtml", "one.xhtml", "two.xhtml"]))
    assert result.text == (
        "The End\n\nRecalled to green.\n\nThe Start\n\nIt was the best of tests.\n\n"
        "The Middle\n\nIt was the worst of tests."
    )
    assert result.title == "A Tale of Two Tests" and "Table of contents" not in result.text
    assert extract("t.epub", make_epub(CHAPTERS, title=None)).title is None


def test_a_chapter_the_book_lists_but_lacks_is_noticed():
    result = extract("t.epub", make_epub(CHAPTERS, leave_out=("two.xhtml",)))
    assert "worst" not in result.text and result.notices == [
        "1 chapter(s) the book lists are not in the file: OEBPS/text/two.xhtml"
    ]


def test_a_drm_protected_epub_is_refused_but_obfuscated_fonts_are_not_drm():
    drm = ENCRYPTION.format(algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc", uri="OEBPS/text/one.xhtml")
    with pytest.raises(ExtractionError, match="DRM-protected"):
        extract("locked.epub", make_epub(CHAPTERS, encryption=drm))
    fonts = ENCRYPTION.format(algorithm="http://www.idpf.org/2008/embedding", uri="OEBPS/fonts/a.otf")
    assert "best of tests" in extract("fonts.epub", make_epub(CHAPTERS, encryption=fonts)).text


def test_an_epub_bomb_is_refused_with_413():
    with pytest.raises(DecompressionBombError, match="zip bomb") as caught:
        extract("bomb.epub", with_bomb(make_epub(CHAPTERS), "OEBPS/text/two.xhtml"))
    assert caught.value.status == 413


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (make_epub(CHAPTERS)[:200], "damaged or cut short"),
    ],
    ids=["truncated"],
)
def test_epub_files_that_cannot_be_read_get_a_reason(data, reason):
    with pytest.raises(ExtractionError, match=reason):
        extract("book.epub", data)
