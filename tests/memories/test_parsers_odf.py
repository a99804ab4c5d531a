"""OpenDocument text and presentations (.odt, .odp): headings, lists, tables, frames, footnotes, headers
and footers, slides and notes; the title from meta.xml or the first heading; refusals in words."""

from __future__ import annotations

import pytest

from memories.parsers import DecompressionBombError, ExtractionError, extract
from tests.memories.office_files import make_odf, with_bomb

TEXT_BODY = (
    "<text:sequence-decls/>"
    "<text:table-of-content><text:index-body><text:p>Contents repeated 1</text:p></text:index-body>"
    "</text:table-of-content>"
    '<text:p text:style-name="P1">Survey of the river</text:p>'
    '<text:h text:outline-level="1">Method</text:h>'
    '<text:p>We walked<text:s text:c="2"/>the bank<text:note text:note-class="footnote">'
    "<text:note-citation>1</text:note-citation><text:note-body><text:p>On foot, in May.</text:p></text:note-body>"
    "</text:note> twice.<draw:frame><draw:text-box><text:p>Framed aside on the weather</text:p></draw:text-box>"
    "</draw:frame></text:p>"
    "<text:list><text:list-item><text:p>First bend</text:p><text:list><text:list-item><text:p>Sand bar</text:p>"
    "</text:list-item></text:list></text:list-item></text:list>"
    "<text:tracked-changes><text:changed-region><text:deletion><text:p>Deleted words</text:p></text:deletion>"
    "</text:changed-region></text:tracked-changes>"
    "<table:table><table:table-row><table:table-cell><text:p>Point</text:p></table:table-cell>"
    "<table:table-cell><text:p>Depth</text:p></table:table-cell></table:table-row></table:table>"
)
TITLE_STYLE = '<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Title"/>'
MASTER = (
    '<office:master-styles><style:master-page style:name="Standard"><style:header><text:p>River Trust</text:p>'
    "</style:header><style:footer><text:p>Draft, do not cite</text:p></style:footer></style:master-page>"
    "</office:master-styles>"
)


def odt(**extra) -> bytes:
    return make_odf("text", TEXT_BODY, automatic_styles=TITLE_STYLE, styles=MASTER, **extra)


def test_odt_text_reads_in_document_order_without_generated_or_deleted_text():
    text = extract("survey.odt", odt()).text
    assert text == (
        "River Trust\n\n# Survey of the river\n\n# Method\n\nWe walked  the bank twice.\n\n"
        "Framed aside on the weather\n\n- First bend\n\n  - Sand bar\n\nPoint | Depth\n\n"
        "On foot, in May.\n\nDraft, do not cite"
    )


def test_the_odt_title_is_meta_title_else_the_title_paragraph():
    assert extract("survey.odt", odt(title="River Survey 2026")).title == "River Survey 2026"
    assert extract("survey.odt", odt(title="Untitled 1")).title == "Survey of the river"
    heading_only = make_odf("text", '<text:h text:outline-level="1">Only a heading</text:h>')
    assert extract("h.odt", heading_only).title == "Only a heading"


def test_odp_slides_read_with_their_titles_and_notes_but_not_the_page_numbers():
    body = (
        '<draw:page draw:name="page1"><draw:frame presentation:class="title"><draw:text-box><text:p>Launch plan</text:p>'
        '</draw:text-box></draw:frame><draw:frame presentation:class="outline"><draw:text-box><text:list>'
        "<text:list-item><text:p>Beta in June</text:p></text:list-item></text:list></draw:text-box></draw:frame>"
        '<draw:frame presentation:class="page-number"><draw:text-box><text:p>1</text:p></draw:text-box></draw:frame>'
        '<presentation:notes><draw:frame presentation:class="notes"><draw:text-box><text:p>Say it slowly.</text:p>'
        "</draw:text-box></draw:frame></presentation:notes></draw:page>"
        '<draw:page draw:name="page2"><draw:custom-shape><text:p>A shape with words</text:p></draw:custom-shape>'
        "</draw:page>"
    )
    result = extract("launch.odp", make_odf("presentation", body))
    assert result.text == (
        "## Slide 1: Launch plan\n\n- Beta in June\n\nNotes: Say it slowly.\n\n## Slide 2\n\nA shape with words"
    )
    assert result.title == "Launch plan"


def test_a_password_protected_odt_is_refused_as_password_protected():
    with pytest.raises(ExtractionError, match=r"this \.odt is password-protected"):
        extract("locked.odt", make_odf("text", "", encrypted_content=True))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"PK\x03\x04" + bytes(100), "damaged or cut short"),
        (make_odf("text", "<text:p>unclosed"), "content.xml inside it is not well-formed XML"),
    ],
    ids=["truncated", "broken-xml"],
)
def test_odf_files_that_cannot_be_read_get_a_reason(data, reason):
    with pytest.raises(ExtractionError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        extract("file.odt", data)


def test_an_odt_bomb_is_refused_with_413():
    with pytest.raises(DecompressionBombError, match="zip bomb") as caught:
        extract("bomb.odt", with_bomb(odt(), "content.xml"))
    assert caught.value.status == 413


def test_without_a_declared_title_the_heading_line_an_odt_opens_with_is_the_title():
    body = "<text:p>Survey of the river</text:p><text:p>We walked the bank twice.</text:p>"
    body += '<text:h text:outline-level="1">Method</text:h>'
    result = extract("survey.odt", make_odf("text", body))
    assert result.title == "Survey of the river" and result.text.startswith("Survey of the river\n\n")
    prose = "<text:p>We walked the bank twice.</text:p><text:p>Then home.</text:p>"
    assert extract("walk.odt", make_odf("text", prose)).title is None
    listed = "<text:list><text:list-item><text:p>First bend</text:p></text:list-item></text:list>"
    assert extract("list.odt", make_odf("text", listed + "<text:p>Text.</text:p>")).title is None
