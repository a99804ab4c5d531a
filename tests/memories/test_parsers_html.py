"""HTML: a web page's main content without its navigation, a simple page's every word, and its title."""

from __future__ import annotations

import pytest

from memories.parsers import ExtractionError, extract
from memories.parsers.html import html_title

ARTICLE = [
    "The river rose two metres overnight after three days of rain in the hills above the town.",
    "Volunteers filled sandbags at the fire station until midnight, and the old bridge was closed to traffic.",
    "The mayor said the new flood wall, finished last spring, kept the water out of the market square.",
    "Engineers will inspect the bridge piers on Thursday before it opens again to cars and buses.",
]


def news_page(title: str = "River rises two metres overnight | The Valley Gazette") -> bytes:
    menu = "".join(f'<li><a href="/{name.lower()}">{name}</a></li>' for name in ["Home", "News", "Sport", "Weather"])
    paragraphs = "".join(f"<p>{text}</p>" for text in ARTICLE)
    related = "".join(f'<li><a href="/r{i}">Related story number {i} about something else</a></li>' for i in range(8))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta property="og:title" content="River rises two metres overnight">
<script>window.analytics = {{track: function() {{}}}};</script><style>body {{ font: 16px serif }}</style></head>
<body>
<header class="site-header"><div class="logo">The Valley Gazette</div>
<nav class="main-nav"><ul>{menu}</ul></nav></header>
<div class="breadcrumb"><a href="/">Home</a> / <a href="/news">News</a></div>
<main><article><h1>River rises two metres overnight</h1>{paragraphs}</article></main>
<aside class="sidebar"><h3>Most read</h3><ul>{related}</ul></aside>
<footer id="footer"><p>Copyright 2024 The Valley Gazette. All rights reserved.</p>
<p>Contact us · Privacy policy · Cookie settings · Advertise with us</p></footer>
</body></html>""".encode()


def test_a_web_page_keeps_its_main_content_without_navigation():
    result = extract("river.html", news_page())
    for paragraph in ARTICLE:
        assert paragraph in result.text
    for boilerplate in ("Sport", "Related story number 3", "All rights reserved", "Privacy policy", "analytics"):
        assert boilerplate not in result.text
    assert len(result.notices) == 1 and "navigation, menus and other furniture were left out" in result.notices[0]


def test_a_simple_html_note_keeps_all_its_text():
    html = (
        b"<html><head><title>x</title><style>p{}</style><script>alert(1)</script></head>"
        b"<body><h1>Heading</h1><p>Visible &amp; kept.</p><ul><li>one</li><li>two</li></ul></body></html>"
    )
    result = extract("page.html", html)
    assert result.text == "Heading\n\nVisible & kept.\n\none\ntwo"
    assert result.notices == []


@pytest.mark.parametrize(
    "page",
    [
        b"<html><head><script src='app.js'></script></head><body><div id='root'></div>"
        b"<script>document.getElementById('root').innerHTML = '<p>Hello</p>';</script></body></html>",
        b"<!doctype html><html><body><noscript>You need to enable JavaScript to run this app.</noscript>"
        b"<script>" + b"var x = 1;" * 500 + b"</script></body></html>",
    ],
)
def test_a_page_that_is_all_script_has_no_extractable_text_and_says_why(page):
    with pytest.raises(ExtractionError) as excinfo:
        extract("app.html", page)
    message = str(excinfo.value)
    assert message.startswith("no extractable text: the page is all script")
    assert "innerHTML" not in message and "var x" not in message


def test_an_empty_page_without_scripts_has_no_extractable_text():
    with pytest.raises(ExtractionError, match=r"^no extractable text$"):
        extract("blank.html", b"<html><head><title>Blank</title></head><body> </body></html>")


@pytest.mark.parametrize(
    ("page", "title"),
    [
        ("<title>Quarterly report</title><h1>Other</h1>", "Quarterly report"),
        ("<title>  Spread\n over   lines </title>", "Spread over lines"),
        ("<title>Untitled document</title><h1>Minutes of May</h1>", "Minutes of May"),
        ("<title>Home</title><meta property='og:title' content='Shop opening hours'>", "Shop opening hours"),
        ("<meta name='og:title' content='From og'><h1>From h1</h1>", "From og"),
        ("<body><h1>Only a <em>heading</em></h1><p>text</p></body>", "Only a heading"),
        ("<svg><title>icon</title></svg><h1>Real heading</h1>", "Real heading"),
        ("<title>&Uuml;bersicht &amp; Pl&auml;ne</title>", "Übersicht & Pläne"),
        ("<title></title><p>No heading at all</p>", None),
    ],
)
def test_the_title_is_the_title_element_or_og_title_or_the_first_h1(page, title):
    assert html_title(page) == title


def test_the_title_reaches_the_extracted_result():
    assert extract("river.html", news_page()).title == "River rises two metres overnight | The Valley Gazette"
    assert extract("river.html", news_page(title="index")).title == "River rises two metres overnight"


def test_the_declared_charset_is_used():
    page = '<html><head><meta charset="windows-1251"><title>Новости</title></head><body><p>Привет</p></body></html>'
    result = extract("news.htm", page.encode("cp1251"))
    assert result.title == "Новости" and result.text == "Привет"
    legacy = '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>caf\xe9 \x80 5</p>'
    assert extract("menu.html", legacy.encode("latin-1")).text == "café € 5"


def test_a_page_saved_without_an_extension_is_read_as_html():
    result = extract("saved", news_page())
    assert ARTICLE[0] in result.text and "Privacy policy" not in result.text
    assert result.metadata["mime"] == "text/html"
