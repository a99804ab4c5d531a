"""RTF: its text, never its embedded pictures, objects or binary data; its title from the info group."""

from __future__ import annotations

import re

import pytest

from memories.parsers import ExtractionError, InflateBudget, extract
from memories.parsers import rtf as rtf_format

HEADER = rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\froman Times New Roman;}}"


def rtf(body: bytes, *, info: bytes = b"", header: bytes = HEADER) -> bytes:
    return header + (b"{\\info" + info + b"}" if info else b"") + body + b"}"


def test_text_and_paragraphs_are_read():
    result = extract("letter.rtf", rtf(rb"\f0\fs24 Dear Alice,\par We accept the offer.\par\par Regards\par"))
    assert result.text.split() == ["Dear", "Alice,", "We", "accept", "the", "offer.", "Regards"]
    assert result.metadata["mime"] == "application/rtf" and result.title is None


def test_the_title_comes_from_the_info_group():
    data = rtf(rb"Body text\par", info=rb"{\title Annual report 2024}{\author Alice}")
    result = extract("scan0001.rtf", data)
    assert result.title == "Annual report 2024" and "Annual report" not in result.text


def test_escapes_and_code_pages_are_decoded():
    body = rb"Caf\'e9 cr\'e8me, \u8364? 12, \u1055?\u1088?\u1080?\u1074?\u1077?\u1090?\par"
    assert extract("menu.rtf", rtf(body)).text.strip() == "Café crème, € 12, Привет"
    cyrillic = rtf(rb"\'cf\'f0\'e8\'e2\'e5\'f2, \'ec\'e8\'f0\par", header=rb"{\rtf1\ansi\ansicpg1251\deff0")
    assert extract("ru.rtf", cyrillic).text.strip() == "Привет, мир"


def test_embedded_pictures_objects_and_binary_data_are_left_out():
    picture = b"{\\pict\\pngblip\\picw64\\pich64 " + b"89504e470d0a1a0a" * 4000 + b"}"
    raw = bytes(range(256)) * 8
    binary = b"{\\*\\blipuid 0123}{\\pict\\wmetafile8\\bin" + str(len(raw)).encode() + b" " + raw + b"}"
    obj = (
        b"{\\object\\objemb{\\*\\objclass Excel.Sheet.8}{\\*\\objdata 01050000020000000b000000"
        + b"d0cf11e0a1b11ae1" * 2000
        + b"}{\\result {\\rtlch Quarter one: 1200}}}"
    )
    data = rtf(b"Before the picture.\\par " + picture + binary + b" After the picture.\\par " + obj + b"\\par End.")
    text = extract("report.rtf", data).text
    assert "Before the picture." in text and "After the picture." in text and "End." in text
    assert "Quarter one: 1200" in text, "an object's text rendering is kept"
    assert not re.search(r"[0-9a-f]{16}", text), "no hex junk"
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in text), "no raw binary"
    assert len(text) < 200


def test_a_big_embedded_picture_is_skipped_without_reading_it_char_by_char():
    # 20 MB of hex: the group is skipped by finding its closing brace, never read as text.
    picture = b"{\\pict\\jpegblip " + b"ffd8ffe000104a46" * 1_300_000 + b"}"
    text = extract("photo.rtf", rtf(b"Caption: the team in 2019.\\par " + picture)).text
    assert text.strip() == "Caption: the team in 2019."


def test_footnotes_are_kept_after_the_body():
    body = rb"The study{\super\chftn}{\footnote\pard\plain{\super\chftn} Smith, 2020, p. 4.} found growth.\par"
    text = extract("paper.rtf", rtf(body)).text
    assert text.index("found growth.") < text.index("Smith, 2020, p. 4.")
    assert "The study found growth." in " ".join(text.split())


def test_too_much_markup_is_refused_with_the_limit(monkeypatch):
    monkeypatch.setattr(rtf_format, "MAX_RTF_MARKUP_BYTES", 1000)
    with pytest.raises(ExtractionError, match="at most 1,000 are read"):
        extract("book.rtf", rtf(b"word " * 500))


def test_an_unbalanced_rtf_still_gives_its_text():
    assert "Cut short here" in extract("cut.rtf", HEADER + rb"\pard Cut short here\par{\b bold").text


def test_an_rtf_without_text_has_no_extractable_text():
    with pytest.raises(ExtractionError, match="no extractable text"):
        extract("empty.rtf", rtf(b"{\\pict\\pngblip 89504e47}"))


def test_the_parse_refuses_bytes_that_are_not_rtf():
    with pytest.raises(ExtractionError, match=r"not an RTF file"):
        rtf_format.parse(b"plain words", budget=InflateBudget(10**6), max_inflated=10**6)


def test_a_legacy_title_of_question_marks_gives_way_to_the_unicode_one():
    """Word writes {\\title ???} in the ANSI code page, then the same title again as \\uN escapes."""
    data = (
        b"{\\rtf1\\ansi\\ansicpg1252{\\info{\\title ?????}{\\title \\u12478\\'3f\\u12523\\'3f\\u12466\\'3f}}Body text.}"
    )
    assert extract("jp.rtf", data).title == "\u30be\u30eb\u30b2"


def test_without_an_info_title_the_heading_line_it_opens_with_is_the_title():
    data = rtf(rb"\par Annual report\par\par The year went well.\par")
    result = extract("scan0001.rtf", data)
    assert result.title == "Annual report" and result.text.strip().startswith("Annual report")
    assert extract("r.rtf", rtf(rb"Annual report\par", info=rb"{\title Report 2024}")).title == "Report 2024"
