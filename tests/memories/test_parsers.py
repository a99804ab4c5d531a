"""File bytes -> text for every supported format, and a clear reason for every file that cannot be read."""

from __future__ import annotations

import pytest

from memories.parsers import ExtractionError, antiword_available, extract
from tests.files import BAD_FILES, make_docx, make_pdf


def test_plain_text_and_markdown_keep_their_text():
    result = extract("notes.md", b"# Title\n\nSome *markdown* text.\r\n")
    assert result.text == "# Title\n\nSome *markdown* text.\n"
    assert result.metadata["extension"] == "md" and result.metadata["filename"] == "notes.md"
    assert result.metadata["size"] == 32 and len(result.metadata["sha256"]) == 64


def test_text_in_another_encoding_is_detected():
    text = (
        "Le café était crème et la façade de l'hôtel, très élégante, donnait sur la place.\n"
        "Nous avons déjà vu cette pièce de théâtre à Noël ; elle était naïve mais pleine de poésie.\n"
    )
    assert extract("latin.txt", text.encode("cp1252")).text == text
    assert extract("utf16.txt", text.encode("utf-16")).text == text
    assert extract("sjis.txt", "東京は晴れです。今日は会議があります。".encode("shift_jis")).text.startswith("東京")


def test_html_keeps_only_the_visible_text():
    html = (
        b"<html><head><title>x</title><style>p{}</style><script>alert(1)</script></head>"
        b"<body><h1>Heading</h1><p>Visible &amp; kept.</p><ul><li>one</li><li>two</li></ul></body></html>"
    )
    text = extract("page.html", html).text
    assert "Heading" in text and "Visible & kept." in text and "one\ntwo" in text
    assert "alert" not in text and "p{}" not in text


@pytest.mark.parametrize("name", ["app.py", "main.go", "lib.rs", "App.tsx", "query.sql", "conf.yaml", "Makefile"])
def test_code_files_are_text(name):
    assert "return" in extract(name, b"def f():\n    return 1\n").text


def test_pdf_pages_become_paragraphs_and_the_page_count_is_kept():
    result = extract("report.pdf", make_pdf(["First page text.", "Second page text."]))
    assert result.text == "First page text.\n\nSecond page text."
    assert result.metadata["pageCount"] == 2 and result.metadata["mime"] == "application/pdf"


def test_docx_keeps_headings_paragraphs_and_tables():
    text = extract("plan.docx", make_docx()).text
    assert "# Quarterly plan" in text and "## Budget" in text
    assert "Item | Cost\nServers | 1200" in text
    assert text.index("Servers") < text.index("Closing remarks")


@pytest.mark.skipif(not antiword_available(), reason="antiword is not installed")
def test_a_fake_doc_is_refused_clearly():
    with pytest.raises(ExtractionError, match="not a legacy Word"):
        extract("old.doc", b"\x00\x01binary pretending" * 8)


EXTRA_BAD_FILES = [
    ("noextension", bytes(range(256)) * 4, "has no extension and is not a supported file type"),
    ("dir\\file.txt", b"data", "path separator"),
    ("whitespace.txt", b"   \n\n\t  ", "no extractable text"),
]


@pytest.mark.parametrize(
    ("name", "data", "reason"), BAD_FILES + EXTRA_BAD_FILES, ids=[b[0][:20] for b in BAD_FILES + EXTRA_BAD_FILES]
)
def test_files_that_cannot_be_read_get_a_clear_reason(name, data, reason):
    with pytest.raises(ExtractionError) as excinfo:
        extract(name, data)
    assert reason in str(excinfo.value)
