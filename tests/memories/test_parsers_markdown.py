"""Markdown notes keep their text as written and take their title from front matter or the first # heading."""

from __future__ import annotations

import pytest

from memories.parsers import extract
from memories.parsers.markdown import markdown_title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Quarterly planning\n\nWe met on Monday.\n", "Quarterly planning"),
        ("Some intro line.\n\n# The real title\n\nBody.\n", "The real title"),
        ("## Only a section\n\nBody.\n", None),
        ("#hashtag is not a heading\n", None),
        ("   # Indented a little\n", "Indented a little"),
        ("# Closed heading ##\n", "Closed heading"),
        ("# **Bold** and `code` and [a link](https://example.org)\n", "Bold and code and a link"),
        ("# Notes on [[Project Atlas|Atlas]] {#notes}\n", "Notes on Atlas"),
        ("Setext title\n============\n\nBody.\n", "Setext title"),
        ("```bash\n# not a title, a shell comment\n```\n\n# After the code\n", "After the code"),
        ("~~~\n# inside a tilde fence\n~~~\n", None),
        ("---\ntitle: From the front matter\ntags: [a, b]\n---\n\n# Heading\n", "From the front matter"),
        ('---\ntitle: "Quoted: with a colon"\n---\nBody\n', "Quoted: with a colon"),
        ("---\ntitle: 'Single quoted'\n---\nBody\n", "Single quoted"),
        ("---\ndate: 2024-05-01\n---\n\n# Heading after front matter\n", "Heading after front matter"),
        ("---\ntitle: >\n  folded\n---\n\n# Fallback heading\n", "Fallback heading"),
        ("---\nlayout: post\n---\n# Only front matter without a title\n", "Only front matter without a title"),
        ("Plain note with no heading at all.\n", None),
        ("", None),
    ],
)
def test_the_title_is_the_front_matter_title_or_the_first_level_one_heading(text, title):
    assert markdown_title(text) == title


@pytest.mark.parametrize("name", ["Team notes.md", "Team notes.markdown"])
def test_a_markdown_file_keeps_its_text_and_gets_its_heading_as_title(name):
    result = extract(name, b"# Weekly sync\n\nAlice met the Product Team.\r\n")
    assert result.text == "# Weekly sync\n\nAlice met the Product Team.\n"
    assert result.title == "Weekly sync" and result.metadata["mime"] == "text/markdown"


def test_plain_text_files_get_no_title_from_markdown_headings():
    assert extract("notes.txt", b"# Looks like a heading\n\nBody.\n").title is None
    assert extract("README", b"# Project\n\nBody.\n").title is None


def test_a_very_long_heading_is_cut():
    assert len(extract("long.md", ("# " + "word " * 200).encode()).title) == 300
