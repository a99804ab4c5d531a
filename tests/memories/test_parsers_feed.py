"""XML and news feeds: a feed becomes its articles (title, date, author, link, text), without its
markup; any other XML stays the text it is."""

from __future__ import annotations

import pytest

from memories.parsers import ExtractionError, extract
from memories.parsers.feed import NOT_WELL_FORMED

RSS2 = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>Valley Allotments</title>
  <link>https://example.org/</link>
  <description>News from the plots by the river</description>
  <item>
    <title>Leeks &amp; onions in the frost</title>
    <link>https://example.org/leeks</link>
    <pubDate>Tue, 03 Jan 2006 04:02:09 +0900</pubDate>
    <dc:creator>Morag Kerr</dc:creator>
    <description>&lt;p&gt;The leeks stood the frost well.&lt;br /&gt;The onions did not.&lt;/p&gt;</description>
  </item>
  <item>
    <title>Water butts</title>
    <guid isPermaLink="true">https://example.org/butts</guid>
    <description><![CDATA[<p>Two new <b>water butts</b> by the shed.</p>]]></description>
    <content:encoded><![CDATA[<p>Two new <b>water butts</b> by the shed, paid from the fund.</p>]]></content:encoded>
  </item>
</channel>
</rss>"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="text">Field notes</title>
  <subtitle>Birds seen on Saturday walks</subtitle>
  <entry>
    <title>Kingfisher at the weir</title>
    <link rel="alternate" href="https://example.org/kingfisher"/>
    <link rel="edit" href="https://example.org/edit/1"/>
    <updated>2024-03-02T09:30:00Z</updated>
    <author><name>Aïda Novák</name></author>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>A kingfisher flew <em>upstream</em>.</p></div></content>
  </entry>
</feed>""".encode()

# RSS 1.0 (RDF) in Shift_JIS, as Japanese blogs of the 2000s published it.
RDF_SJIS = """<?xml version="1.0" encoding="Shift_JIS"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://example.jp/"><title>エルエル</title><link>http://example.jp/</link>
<description></description>
<items><rdf:Seq><rdf:li rdf:resource="http://example.jp/1" /></rdf:Seq></items></channel>
<item rdf:about="http://example.jp/1"><title>年始進行中です。</title><link>http://example.jp/1</link>
<description>紅白の琴欧州の「ブルガリア！」</description><dc:date>2006-01-02T02:48:54+09:00</dc:date></item>
</rdf:RDF>""".encode("shift_jis")


def test_an_rss_feed_becomes_its_articles_without_markup():
    result = extract("allotments.xml", RSS2)
    assert result.title == "Valley Allotments"
    assert result.metadata["feed"] == {"format": "RSS", "entries": 2}
    assert result.text.startswith("News from the plots by the river\n\n## Leeks & onions in the frost\n")
    assert "2006-01-03 04:02 · Morag Kerr\nhttps://example.org/leeks" in result.text
    assert "The leeks stood the frost well.\nThe onions did not." in result.text
    # The full content wins over the summary, and a permalink guid is the link.
    assert (
        "## Water butts\nhttps://example.org/butts\n\nTwo new water butts by the shed, paid from the fund."
        in result.text
    )
    for markup in ("<", "&lt;", "CDATA", "dc:creator", "pubDate", "rss"):
        assert markup not in result.text
    assert result.notices == []


def test_an_atom_feed_keeps_each_entrys_alternate_link_author_and_xhtml_text():
    result = extract("birds.atom", ATOM)
    assert result.title == "Field notes"
    assert result.text == (
        "Birds seen on Saturday walks\n\n## Kingfisher at the weir\n2024-03-02 09:30 · Aïda Novák\n"
        "https://example.org/kingfisher\n\nA kingfisher flew upstream."
    )


def test_a_japanese_rss_1_0_feed_in_shift_jis_is_read():
    result = extract("10e.rdf", RDF_SJIS)
    assert result.title == "エルエル"
    assert result.metadata["feed"]["format"] == "RSS 1.0"
    assert "## 年始進行中です。\n2006-01-02 02:48\nhttp://example.jp/1\n\n紅白の琴欧州の「ブルガリア！」" in result.text


def test_other_xml_is_kept_as_the_text_it_is():
    xml = b'<?xml version="1.0"?>\n<config><server port="8080">main</server></config>\n'
    result = extract("settings.xml", xml)
    assert result.text == xml.decode() and "feed" not in result.metadata


def test_a_feed_that_is_not_well_formed_is_kept_as_text_with_a_notice():
    broken = RSS2.replace(b"</channel>", b"")
    result = extract("broken.rss", broken)
    assert "<title>Valley Allotments</title>" in result.text
    assert result.notices == [NOT_WELL_FORMED]


@pytest.mark.parametrize(
    "data",
    [
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>Empty</title></channel></rss>',
        b'<rss version="2.0"><channel><item><title></title><description>  </description></item></channel></rss>',
    ],
)
def test_a_feed_without_any_text_is_refused_with_the_reason(data):
    with pytest.raises(ExtractionError, match="no extractable text"):
        extract("empty.rss", data)


def test_a_feed_does_not_expand_entities_or_read_a_dtd():
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c SYSTEM "file:///etc/passwd">]><rss version="2.0"><channel><item><title>Hi</title>'
        b"<description>&b; &c;</description></item></channel></rss>"
    )
    result = extract("bomb.rss", bomb)
    assert "aaaaaaaaaa" not in result.text and "root:" not in result.text


# RSS 0.91 names Netscape's DTD, which defines HTML's entities; aif.ru's health feed (one of the real
# documents of bench/data/organise-real) is shaped like this, in windows-1251.
RSS091 = """<?xml version="1.0" encoding="windows-1251"?>
<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"
  "http://my.netscape.com/publish/formats/rss-0.91.dtd">
<rss version="0.91"><channel><title>АиФ Здоровье</title>
<item><title>Как закалить горло</title><description>Врачи советуют &laquo;холодное&raquo; питьё&nbsp;понемногу &amp; часто &bogus;.</description></item>
</channel></rss>""".encode("cp1251")


def test_an_rss_0_91_feed_that_names_netscapes_dtd_is_read_without_fetching_it():
    result = extract("aif.xml", RSS091)
    assert result.title == "АиФ Здоровье"
    assert "<rss" not in result.text and not result.notices
    assert "Врачи советуют «холодное» питьё\xa0понемногу & часто &bogus;." in result.text


def test_an_internal_subset_still_goes_to_the_safe_parser_whatever_the_external_dtd():
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE rss SYSTEM "http://example.org/rss.dtd" [<!ENTITY c SYSTEM '
        b'"file:///etc/passwd">]><rss version="0.91"><channel><item><title>Hi</title>'
        b"<description>&c; &laquo;</description></item></channel></rss>"
    )
    result = extract("bomb.rss", bomb)
    assert "root:" not in result.text
