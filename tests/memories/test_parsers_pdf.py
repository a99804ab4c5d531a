"""PDF text: the header anywhere in the first KB, passwords, per-page accounting, text layers that are
not text, and titles from the metadata (memories.parsers.pdf and memories.parsers.pages)."""

from __future__ import annotations

import logging
import zlib

import pytest

from memories.parsers import DecompressionBombError, ExtractionError, extract
from memories.parsers import pdf as pdf_format
from memories.parsers.pages import (
    PageText,
    garbled_line,
    page_notices,
    page_range,
    text_is_usable,
    without_garbled_lines,
)
from memories.parsers.pdf import real_title
from tests.files import make_blank_pdf, make_pdf
from tests.memories import scans


def test_a_pdf_with_stray_bytes_before_its_header_is_read():
    data = b"\r\n\x00X" + make_pdf(["Invoice 2024-117: harbour dues"])
    assert "harbour dues" in extract("invoice.pdf", data).text


def test_a_header_past_the_first_kilobyte_is_not_a_pdf():
    """PDF readers look for the header in the first 1 KB only; past it the content is read as what it
    is (here text), and the notice says the name promised a PDF."""
    extracted = extract("late.pdf", b"x" * 1100 + make_pdf(["Too late a header"]))
    assert extracted.metadata["mime"] == "text/plain"
    assert extracted.notices == ["the file is named .pdf but is really plain text, and was read as such"]


def test_a_pdf_that_needs_a_password_is_refused_as_password_protected():
    with pytest.raises(ExtractionError, match="password-protected") as caught:
        extract("locked.pdf", scans.encrypted_pdf(user_password="open-sesame"))
    assert "Error" not in str(caught.value)


def test_a_pdf_encrypted_with_an_empty_user_password_is_read():
    assert "board meeting" in extract("permissions.pdf", scans.encrypted_pdf(user_password="")).text


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "the file is empty"),
        (make_pdf(["Some text here."])[:120], "damaged or truncated"),
        (b"%PDF-1.7\n" + b"\x00" * 40, "damaged or truncated"),
    ],
)
def test_empty_and_truncated_pdfs_are_refused_with_a_reason(data, reason):
    with pytest.raises(ExtractionError, match=reason) as caught:
        extract("bad.pdf", data)
    assert "Error" not in str(caught.value)


def test_each_page_with_a_text_layer_is_recorded_as_such():
    extracted = extract("two.pdf", make_pdf(["First page words", "Second page words"]))
    assert extracted.metadata["pages"] == [{"first": 1, "last": 2, "text": "layer"}]
    assert extracted.metadata["pageCount"] == 2
    assert extracted.notices == []


def test_a_blank_pdf_has_no_text_and_nothing_to_read_by_ocr():
    with pytest.raises(ExtractionError, match="no extractable text"):
        extract("blank.pdf", make_blank_pdf())


@scans.needs_tesseract
def test_a_mixed_pdf_keeps_its_text_pages_and_leaves_the_scanned_ones_for_ocr():
    data = scans.mixed_pdf(["Text page one", "Text page two"], [[scans.PHRASE]])
    extracted = extract("mixed.pdf", data, defer_ocr=True)
    assert "Text page one" in extracted.text and "Text page two" in extracted.text
    assert extracted.ocr_pages == [3]
    assert [(p["first"], p["last"], p["text"]) for p in extracted.metadata["pages"]] == [
        (1, 2, "layer"),
        (3, 3, "pending"),
    ]


@scans.needs_tesseract
def test_a_scanned_pdf_waits_for_ocr_instead_of_being_refused():
    extracted = extract("scan.pdf", scans.scanned_pdf([[scans.PHRASE], [scans.SECOND]]), defer_ocr=True)
    assert extracted.text == ""
    assert extracted.ocr_pages == [1, 2]


@scans.needs_tesseract
def test_a_text_layer_of_raw_font_codes_counts_as_no_text_and_goes_to_ocr():
    extracted = extract("glyphs.pdf", scans.raw_code_pdf(), defer_ocr=True)
    assert extracted.ocr_pages == [1]
    assert extracted.metadata["pages"] == [
        {"first": 1, "last": 1, "text": "pending", "reason": "text could not be decoded"}
    ]


@scans.needs_tesseract
def test_reading_a_pdf_logs_no_warning_per_font(caplog):
    with caplog.at_level(logging.WARNING):
        extract("fonts.pdf", make_pdf(["Helvetica everywhere"] * 3))
        extract("glyphs.pdf", scans.raw_code_pdf(), defer_ocr=True)
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]


@pytest.mark.parametrize(
    ("text", "usable"),
    [
        ("Configuration of the harbour cranes.", True),
        ("/g145/g144/g3/g22/g150/g138/g139 /g144/g3", False),
        ("(cid:12)(cid:40)(cid:7)(cid:3)(cid:88)", False),
        ("\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0e\x0f", False),
        ("\ue000\ue001\ue002\ue003 abc", False),
        ("!\"#$%&'()*+,-./:;<=>?@[]^_`{|}~!\"#$%&'()*", False),
        ("Résumé: 日本語のテキスト and Ελληνικά", True),
        ("12", True),
        ("", False),
        ("Text with one stray \ufffd replacement character in a long sentence.", True),
    ],
)
def test_whether_a_text_layer_is_text(text, usable):
    assert text_is_usable(text) is usable


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        ("Annual report 2024", "Annual report 2024"),
        ("  Harbour   dues  ", "Harbour dues"),
        ("Microsoft Word - report.doc", None),
        ("Microsoft PowerPoint - deck.pptx", None),
        ("report-final.pdf", None),
        ("C:\\Users\\ann\\report", None),
        ("untitled", None),
        ("Untitled-1", None),
        ("Document1", None),
        ("1234", None),
        ("", None),
        (None, None),
        ("Q1/Q2 results", "Q1/Q2 results"),
    ],
)
def test_a_metadata_title_is_taken_only_when_it_is_a_real_title(raw, title):
    assert real_title(raw) == title


def test_the_title_comes_from_the_pdf_metadata():
    assert extract("61991.pdf", scans.titled_pdf("Tide tables for the north quay")).title == (
        "Tide tables for the north quay"
    )
    assert extract("bug59058.pdf", scans.titled_pdf("Microsoft Word - bug59058.doc")).title is None


def test_page_ranges_and_notices_name_the_pages():
    assert page_range([1, 2, 3]) == "pages 1–3"
    assert page_range([4]) == "page 4"
    assert page_range([7, 1, 2]) == "pages 1–2, 7"
    pages = [
        PageText(1, "x", "ocr", reason="no-text-layer"),
        PageText(2, "x", "ocr", reason="no-text-layer"),
        PageText(3, "x", "text"),
        PageText(4, "", "dropped", reason="undecodable", why="OCR is off on this server (KYBERNESIS_OCR=off)"),
    ]
    assert page_notices(pages, what="PDF") == [
        "pages 1–2: no text layer, read by OCR",
        "page 4: text could not be decoded, not read: OCR is off on this server (KYBERNESIS_OCR=off)",
    ]


def _with_object_before_the_first(data: bytes, body: bytes) -> bytes:
    """Insert an extra object ahead of the file's first one (readers rebuild the moved offsets)."""
    at = data.index(b"1 0 obj")
    return data[:at] + b"99 0 obj\n" + body + b"\nendobj\n" + data[at:]


def _flate_stream(dictionary: bytes, inflated: bytes) -> bytes:
    packed = zlib.compress(inflated, 9)
    return (
        b"<< " + dictionary + b" /Filter /FlateDecode /Length %d >>\nstream\n" % len(packed) + packed + b"\nendstream"
    )


def test_a_flate_image_is_not_charged_as_a_bomb_but_a_bomb_after_it_is_refused():
    white = b"\xff" * (5000 * 6000)  # a 30 MB greyscale scan, deflated as many scanners do
    image = _flate_stream(b"/Type /XObject /Subtype /Image /Width 5000 /Height 6000 /BitsPerComponent 8", white)
    page = make_pdf(["Words beside a large image"])
    assert "large image" in extract("scan.pdf", _with_object_before_the_first(page, image)).text
    bomb = _flate_stream(b"/Type /XObject /Subtype /Form", b"0 0 m 1 1 l S\n" * (2 * 1024 * 1024))
    with pytest.raises(DecompressionBombError, match="stream inside this PDF"):
        extract("bomb.pdf", _with_object_before_the_first(_with_object_before_the_first(page, bomb), image))


def test_without_a_metadata_title_the_first_pages_large_heading_is_the_title():
    body = "The tracing compiler records hot loops and compiles them to machine code.\nMore body text follows."
    extracted = extract("61991.pdf", make_pdf([body, "Page two."], heading="Trace-based Type Specialization"))
    assert extracted.title == "Trace-based Type Specialization"
    assert extract("61991.pdf", make_pdf([body])).title is None  # one size throughout: no heading


def _line(text: str, size: float) -> list[tuple[str, float]]:
    return [(char, size) for char in text]


def test_a_heading_is_the_largest_lines_and_only_when_they_stand_out_from_the_body():
    body = [_line("Body text of the first page, long enough to count as a page.", 10.0)] * 3
    assert pdf_format.heading_of_lines([_line("A Title", 20.0), _line("In Two Lines", 20.0), *body]) == (
        "A Title In Two Lines"
    )
    assert pdf_format.heading_of_lines([_line("Slightly bigger", 11.0), *body]) is None
    assert pdf_format.heading_of_lines([_line("Big", 20.0), *body]) is None  # under four letters
    assert pdf_format.heading_of_lines([_line("A Title", 20.0), _line("short", 10.0)]) is None  # too little body
    # A later line of the title's size, after other text, is a section's heading, not more title (the
    # OLAP paper of the real documents was titled "... de requêtes OLAP 1 Introduction").
    paper = [_line("Résumés de logs OLAP", 20.0), _line("Patrick Marcel", 12.0), *body, _line("1 Introduction", 20.0)]
    assert pdf_format.heading_of_lines(paper) == "Résumés de logs OLAP"


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("FACTUUR.", "FACTUUR"),
        ("Acme Inc.", "Acme Inc."),
        ("Made in the U.S.", "Made in the U.S."),
        ("Wait...", "Wait..."),
    ],
)
def test_a_heading_keeps_no_full_stop_after_it_but_an_abbreviations(heading, title):
    body = [_line("Body text of the first page, long enough to count as a page.", 10.0)] * 3
    assert pdf_format.heading_of_lines([_line(heading, 20.0), *body]) == title


@pytest.mark.parametrize(
    "line",
    [
        "<//2??.1@A<9=.>922?#3!4,56#",  # TraceMonkey's figure 11: a chart's labels in a shifted font
        "/8A>98FG8E.92/09?@D2#3$4!56#",
        '!"# $!"# %!"# &!"# \'!"# (!"# )!"# *!"# +!"# ,!"# $!!"#',
        "KA>29:92># L<ID2#",
    ],
)
def test_a_line_of_glyph_codes_is_garbled(line):
    assert garbled_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "FR76 ***************************",  # a masked account number
        "[17][18]",
        "2010b)).",
        "x^2 + y^2 = z^2",
        "if (a[i] != b) { return; }",
        "user@example.com, https://example.com/a?b=c&d=e#top",
        "🌴🐢🐐🍄⚽🍻👑📸😬-",
        "Итого: 1 234,56 ₽",
        "1,234.56  2,345.67  3,456.78",
        "Figure 11. Fraction of dynamic bytecodes executed by interpreter",
    ],
)
def test_text_is_not_garbled(line):
    assert not garbled_line(line)


def test_garbled_lines_are_left_out_with_a_notice_naming_their_pages():
    text, dropped = without_garbled_lines("Figure 11. Speedups\n<//2??.1@A<9=.>922?#3!4,56#\n&-./012#3%4%56#\nEnd.")
    assert (text, dropped) == ("Figure 11. Speedups\nEnd.", 2)
    pages = [PageText(10, text, "text", garbled=2), PageText(11, "x", "text"), PageText(13, "y", "text", garbled=1)]
    assert page_notices(pages, what="PDF") == [
        "pages 10, 13: 3 lines of unreadable characters left out (a font without a usable encoding, often a "
        "chart's labels)"
    ]


@pytest.mark.parametrize(
    ("layer", "text"),
    [
        ("a na¨ıve implementation", "a naïve implementation"),  # TraceMonkey, set by TeX
        ("caf´e, Sch¨on, Espa˜na, Erd˝os, fa¸cade", "café, Schön, España, Erdős, façade"),
        ("don´t", "don´t"),  # an acute where an apostrophe was meant: no "t" takes one
        ("http://www.info.univ-tours.fr/˜aligon_j", "http://www.info.univ-tours.fr/˜aligon_j"),
        ("run`echo`", "run`echo`"),
    ],
)
def test_an_accent_set_before_its_letter_makes_one_accented_letter(layer, text):
    assert pdf_format.accented(layer) == text
