"""The registry of formats: each extension is read by one format module, through the one entry point."""

from __future__ import annotations

import pytest

from memories.parsers import FORMATS, SUPPORTED_EXTENSIONS, InflateBudget, Parsed, extract
from memories.parsers import docx as docx_format
from memories.parsers import html as html_format
from memories.parsers import pdf as pdf_format
from memories.parsers import text as text_format
from tests.files import make_docx, make_pdf


def test_no_extension_is_claimed_by_two_formats():
    claimed = [ext for fmt in FORMATS for ext in fmt.extensions]
    assert len(claimed) == len(set(claimed)) == len(SUPPORTED_EXTENSIONS)


@pytest.mark.parametrize(
    ("module", "data"),
    [
        (text_format, b"plain words"),
        (html_format, b"<p>visible words</p>"),
        (pdf_format, make_pdf(["paged words"])),
        (docx_format, make_docx()),
    ],
)
def test_every_format_takes_bytes_and_gives_a_parsed_result(module, data):
    parsed = module.FORMAT.parse(data, budget=InflateBudget(10**8), max_inflated=10**8)
    assert isinstance(parsed, Parsed) and parsed.text.strip()
    assert parsed.notices == [] and parsed.title in (None, "Quarterly plan")  # the .docx's Heading 1


def test_only_paged_formats_report_pages():
    assert pdf_format.parse(make_pdf(["one", "two"]), budget=InflateBudget(10**8), max_inflated=10**8).pages == 2
    assert extract("notes.txt", b"words").metadata.keys() == {"filename", "extension", "mime", "size", "sha256"}
