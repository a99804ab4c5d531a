"""Normalisation (core.normalise): each rule pinned by examples, clean text in any language left as it
is, and normalising twice the same as once."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.normalise import (
    collapse_whitespace,
    compatibility_forms,
    drop_not_text,
    join_hyphenated,
    normalise_label,
    normalise_line_breaks,
    normalise_text,
    repair_mojibake,
    strip_invisible,
)

# Clean text, as a person writes it, in the languages and shapes people keep: none of it changes.
CLEAN = {
    "english": "The configuration file lists every service.\n\nEach one has a port.\n",
    "arabic": "اللغة العربية جميلة، وهي لغة القرآن الكريم.\nيتحدث بها أكثر من ٤٠٠ مليون شخص.",
    "persian with zero-width non-joiner": "می\u200cخواهم کتاب\u200cها را بخوانم.",
    "japanese": "日本語のテキストです。あいうえお、カタカナ、漢字。\n東京は日本の首都です。",
    "russian": "Компания «Аскат» выпустила новую версию программы — ещё быстрее.",
    "portuguese": "São Paulo é a maior cidade do Brasil. A ação, a coração, o 1º andar, nº 5 e a 2ª via.",
    "german": "Die Größe der Straße überrascht. Übermäßig schöne Grüße aus Köln!",
    "french with no-break-free punctuation": "« Bonjour », dit-il. Où êtes-vous ? L'été à Paris…",
    "hindi with joiners": "क्‍ष हिन्दी भाषा",
    "emoji": "Family 👨\u200d👩\u200d👧\u200d👦, flag 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f, "
    "thumbs 👍🏽, heart ❤️ and a rocket 🚀🚀🚀.",
    "code with tabs": 'def main():\n\tvalues = [1,  2,   3]\n\tif values:\n\t\treturn "a  b"\n',
    "python with spaces": "class Config:\n    name   = 'x'    # aligned\n    port   = 8080\n",
    "markdown table": "| Name   | Count |\n|--------|------:|\n| apples |    12 |\n| pears  |     3 |\n",
    "markdown": "# Title\n\n- item one\n- item two  \n  continued\n\n```\ncode  block\n```\n\n---\n",
    "science": "E = mc², H₂O, CO₂, x³ + y³, ½ cup, 10 m², ① first, Brand™, Acme® and © 2024.",
    "numbers table": "2023   1,234.56   7,890.12\n2024   2,345.67   8,901.23",
    "separators": "Chapter 1\n==========\n\n* * *\n\n------------------------------------------------------------------------",
    "urls and paths": "See https://example.org/g1/g2?x=1 and /usr/share/doc/g3 or C:\\Users\\me.",
    "regex in code": 'PUNCT = re.compile(r"[!\\"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]")',
    "mixed scripts": "Meeting with Иван and 田中 about the Ελληνικά translation.",
    "ideographic space": "\u3000段落の始まりです。",
    "spacing accent typed as apostrophe": "don´t and that¨s",
    "line breaks kept": "one\ntwo\n\nthree\n",
}


@pytest.mark.parametrize("text", CLEAN.values(), ids=CLEAN.keys())
def test_clean_text_in_any_language_comes_through_unchanged(text):
    result = normalise_text(text)
    assert result.text == text
    assert result.notices == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\r\nb\rc", "a\nb\nc"),
        ("a\x0bb\u2028c", "a\nb\nc"),
        ("page one\x0cpage two", "page one\n\npage two"),
        ("para\u2029next", "para\n\nnext"),
        ("no breaks", "no breaks"),
    ],
)
def test_line_breaks_become_newlines_and_page_breaks_blank_lines(raw, expected):
    assert normalise_line_breaks(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # UTF-8 read as Windows-1252 or Latin-1: ftfy.
        ("cafÃ©", "café"),
        ("donâ€™t stop", "don’t stop"),
        ("Ã‰tÃ© Ã  Paris", "Été à Paris"),
        ("ÐŸÑ€Ð¸Ð²ÐµÑ‚", "Привет"),
        # A Cyrillic (Greek, Arabic) code page read as Windows-1252.
        ("Êîìïàíèÿ Àñêàò", "Компания Аскат"),
        ("ÊÎÌÏÀÍÈß", "КОМПАНИЯ"),
        ("Îòä¸ëüíûé ïðîåêò", "Отдёльный проект"),
        ("ÊáëçìÝñá êüóìå", "Καλημέρα κόσμε"),
        ("ÇáÚÑÈíÉ áÛÉ ÌãíáÉ", "العربية لغة جميلة"),
        # Only the lines that are mojibake change.
        ("Report 2024\nÊîìïàíèÿ Àñêàò\nEnd", "Report 2024\nКомпания Аскат\nEnd"),
    ],
)
def test_mojibake_is_repaired_with_a_notice(raw, expected):
    fixed, notice = repair_mojibake(raw)
    assert fixed == expected
    assert notice.startswith("Repaired ") and "wrong character set" in notice


@pytest.mark.parametrize(
    "text",
    [
        "Größe Straße Übung",
        "São Paulo ação",
        "été à où",
        "AÇÃO À VISTA",
        "naïve café résumé",
        "“quoted” — dash …",
        "ÀÉÎ",
    ],
)
def test_accented_latin_text_is_not_taken_for_mojibake(text):
    assert repair_mojibake(text) == (text, "")


def test_a_cyrillic_repair_names_the_code_page_it_read():
    _, notice = repair_mojibake("Êîìïàíèÿ Àñêàò âûïóñòèëà íîâóþ âåðñèþ")
    assert notice == (
        "Repaired Cyrillic text that had been read with the wrong character set (Windows-1251 read as Windows-1252)."
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\x01b\x07c\x1fd\x7fe", "abcde"),  # C0 controls and DEL
        ("a\x80b\x9fc", "abc"),  # C1 controls
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("zero\u200bwidth\ufeffmarks\u2060", "zerowidthmarks"),
        ("soft\u00adhyphen", "softhyphen"),
        ("hyphen\u00ad\nat the line end", "hyphen-\nat the line end"),
        ("left\u200eto\u200fright\u202eoverride\u2066isolate\u2069", "lefttorightoverrideisolate"),
        ("red\x1b[31mtext\x1b[0m", "redtext"),
        ("👩\u200d💻 coder", "👩\u200d💻 coder"),  # ZWJ inside an emoji sequence stays
        ("\u200dalone \u200d", "alone "),  # a joiner with nothing to join goes
        ("tag\U000e0067 alone", "tag alone"),  # a tag character outside a flag goes
        ("non\ufdd0char\uffff", "nonchar"),
    ],
)
def test_control_and_format_characters_are_stripped(raw, expected):
    assert strip_invisible(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("conﬁguration ﬂow ﬀ ﬃ ﬄ ﬆ", "configuration flow ff ffi ffl st"),
        ("ＦＵＬＬ ｗｉｄｔｈ １２３", "FULL width 123"),
        ("ｶﾀｶﾅ", "カタカナ"),
        ("𝐁𝐨𝐥𝐝 𝑖𝑡𝑎𝑙𝑖𝑐", "Bold italic"),
        ("\ufeb3\ufef4\ufe8e\ufeb3\ufe94", "سياسة"),  # Arabic presentation forms
        ("no\u00a0break", "no break"),
        ("Ⅻ ſ ﬁ", "XII s fi"),
        # Kept as written: their shape is their meaning.
        ("m² H₂O ½ ① ㎡ ™ nº 1ª … \u3000 ´", "m² H₂O ½ ① ㎡ ™ nº 1ª … \u3000 ´"),
        ("e\u0301", "é"),  # composed
    ],
)
def test_compatibility_forms_are_mapped_except_those_whose_shape_is_the_meaning(raw, expected):
    assert compatibility_forms(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected", "kind", "count"),
    [
        ("Intro /g145/g144/g3/g22 text", "Intro text", "glyphs", 17),
        ("/g1 /g2 /g3 and later a lone /g4 too", "and later a lone too", "glyphs", 12),
        ("word /uni0041/uni0042/uni00430042 word", "word word", "glyphs", 28),
        ("(cid:12)(cid:13) (cid:14)hello", "hello", "cid", 24),
        ("one (cid:3) code", "one code", "cid", 7),
        ("bad \ufffd\ufffd byte", "bad byte", "undecodable", 2),
        ("x !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ y", "x y", "symbols", 64),
    ],
)
def test_what_is_not_text_is_dropped_and_counted(raw, expected, kind, count):
    text, dropped = drop_not_text(raw)
    assert collapse_whitespace(text) == expected
    assert dropped == {kind: count}


@pytest.mark.parametrize(
    "text",
    [
        "/usr/g1 and /g2",  # two paths are not a run of glyph names
        "-" * 80,
        "=" * 30 + " " + "*" * 40,
        "┌────┬────┐\n│ a  │ b  │\n└────┴────┘",
        " | ".join(["1,234.56"] * 12),
        "😀😃😄😁😆😅😂🤣🥲😊😇🙂🙃😉😌😍🥰😘😗😙😚😋😛😝😜🤪🤨🧐🤓😎🥸🤩🥳😏😒",
    ],
)
def test_separators_tables_of_figures_box_drawing_and_emoji_are_text(text):
    assert drop_not_text(text) == (text, {})


def test_the_notice_says_how_many_characters_of_each_kind_went():
    result = normalise_text("Abstract.\n" + "/g145/g144/g3" * 1000 + "\n(cid:7)\ufffd end")
    assert result.text == "Abstract.\n\nend"
    assert result.notices == [
        "Dropped 13,008 characters that were not text: glyph names from a PDF (13,000), "
        "(cid:…) codes from a PDF (7), characters that could not be decoded (�) (1)."
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("com-\npile", "compile"),
        ("we com-\npile the code", "we compile\nthe code"),
        ("com-  \n  piled, then", "compiled,\nthen"),
        ("a well-\nknown fact, well-known to all", "a well-known\nfact, well-known to all"),
        ("the book-\nkeeping, and bookkeeping", "the bookkeeping,\nand bookkeeping"),
        ("Jean-\nPierre", "Jean-\nPierre"),  # a capital: a name or a compound, not a hyphenation
        ("COVID-\n19", "COVID-\n19"),
        ("x-\nray", "x-\nray"),  # one letter before the hyphen
        ("end-\n\nnext paragraph", "end-\n\nnext paragraph"),
        ("a -\nb", "a -\nb"),  # a dash, not a hyphen
        ("hy‐\nphen", "hyphen"),  # U+2010 HYPHEN
        ("in-\nter-\nna-\ntional", "international"),
        ("Страни-\nца", "Страница"),
    ],
)
def test_words_hyphenated_across_a_line_break_are_joined(raw, expected):
    assert join_hyphenated(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("word  word   word", "word word word"),
        ("a\n\n\n\nb", "a\n\nb"),
        ("a\n   \n\t\n\nb", "a\n\nb"),
        ("line end  \nnext", "line end  \nnext"),  # Markdown's line break
        ("ends with a newline\n", "ends with a newline\n"),
        ("  indented\nplain  spaced", "  indented\nplain  spaced"),  # layout: alignment is kept
        ("| a  | b |\nplain  spaced", "| a  | b |\nplain  spaced"),
        ("tab\there\nplain  spaced", "tab\there\nplain  spaced"),
    ],
)
def test_whitespace_is_collapsed_outside_layout(raw, expected):
    assert collapse_whitespace(raw) == expected


def test_a_pdf_page_full_of_problems_comes_out_clean():
    raw = (
        "Conﬁguration   of the com-\npiler\x07 is\u200b described\r\nin the ﬁrst chap-\nter.\x0c"
        "/g12/g13/g14/g15\n\n\n\nÊîìïàíèÿ Àñêàò"
    )
    result = normalise_text(raw)
    assert result.text == "Configuration of the compiler\nis described\nin the first chapter.\n\nКомпания Аскат"
    assert len(result.notices) == 2
    assert result.notices[0].startswith("Repaired Cyrillic text")
    assert result.notices[1] == "Dropped 16 characters that were not text: glyph names from a PDF (16)."


def test_titles_get_the_character_rules_only():
    assert normalise_label("Conﬁguration\u200b Guide ＊ cafÃ©") == "Configuration Guide * café"
    assert normalise_label("Êîìïàíèÿ Àñêàò") == "Компания Аскат"


EXAMPLES = [
    *CLEAN.values(),
    "Conﬁg  com-\npile\x07\n\n\n\n/g1/g2/g3 Êîìïàíèÿ Àñêàò",
    "a  Ã a",
    "word-\n  \nnext",
    "x\u0303\u00a9 e\u0301",
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_normalising_twice_changes_nothing_more(text):
    once = normalise_text(text)
    twice = normalise_text(once.text)
    assert twice.text == once.text
    assert twice.notices == []


PIECES = st.sampled_from(
    [
        "well-",
        "known",
        "com-\n",
        "pile",
        "\n",
        " ",
        "  ",
        "\t",
        "|",
        "```",
        "Êîìï",
        "àíèÿ",
        "Àñêàò",
        "Ã",
        "©",
        "é",
        "\u0301",
        "²",
        "ª",
        "ﬁ",
        "ｶ",
        "ﾞ",
        "\u3000",
        "\u00a0",
        "\u00ad",
        "\u200b",
        "\u200d",
        "😀",
        "/g3",
        "/uni0041",
        "(cid:9)",
        "\ufffd",
        "\x85",
        "\x9f",
        "\x07",
        "\r",
        "\x0c",
        "!@#$%^&*()[]{};:<>?/\\|~`",
        "0123456789",
        "Ab",
        "x",
    ]
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.lists(PIECES, max_size=40).map("".join), st.text(max_size=60)))
def test_normalisation_is_idempotent(text):
    text = text.replace("\x00", "")
    once = normalise_text(text)
    twice = normalise_text(once.text)
    assert twice.text == once.text
    assert twice.notices == []
