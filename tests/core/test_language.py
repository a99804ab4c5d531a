"""core.language: which language a text is in, filler text, and the codes a filter accepts."""

from __future__ import annotations

import pytest

from core.language import (
    UNKNOWN,
    detect_language,
    is_filler,
    language_mix,
    language_name,
    mostly_latin,
    parse_language_code,
)
from tests.languages import ENGLISH, GERMAN, RUSSIAN

JAPANESE = "昨日、データベースを新しいサーバーに移しました。その後、索引を作り直しました。"
KOREAN = "어제 데이터베이스를 새 서버로 옮겼습니다. 그 후에 색인을 다시 만들었습니다."
CHINESE = "昨天我们把数据库迁移到了新的服务器，然后重建了索引。"
LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua. Morbi nulla facilisi, amet sed nulla morbi."
)
LATIN = (
    "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae, aliam Aquitani, tertiam qui "
    "ipsorum lingua Celtae, nostra Galli appellantur."
)


@pytest.mark.parametrize(
    ("text", "code"),
    [(GERMAN, "de"), (ENGLISH, "en"), (RUSSIAN, "ru"), (JAPANESE, "ja"), (KOREAN, "ko"), (CHINESE, "zh")],
)
def test_a_paragraph_is_given_its_iso_639_1_code(text, code):
    assert detect_language(text) == code


def test_japanese_is_told_by_its_kana_even_between_kanji():
    # Mostly kanji, as a Japanese heading can be; the kana mark it as Japanese, not Chinese.
    assert detect_language("東京都議会の予算委員会における審議の記録について") == "ja"


@pytest.mark.parametrize(
    "text",
    ["", "OK", "v2.1", "12.03.2024  1,234.56  -500.00\n13.03.2024  2,000.00  -120.50", "https://example.com/a/b"],
)
def test_too_little_text_is_unknown(text):
    assert detect_language(text) == UNKNOWN


def test_a_line_of_names_the_detector_is_unsure_of_is_unknown_not_latin():
    assert detect_language("Guido van Rossum created Python.") == UNKNOWN


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Priya Nair sent the Postgres upgrade runbook.", "en"),  # the detector guesses English, unsure
        ("Call Hiroshi about the Osaka trip.", "en"),
        ("Bel Hiroshi over de reis naar Osaka.", "nl"),
        ("Buy milk", UNKNOWN),
    ],
)
def test_a_short_english_note_of_names_is_english(text, expected):
    """A walk-through found plain English notes shown as of unknown language: most of their words are
    names. Three lower-case words with an English function word among them settle the guess."""
    assert detect_language(text) == expected


def test_lorem_ipsum_is_filler_and_has_no_language_while_real_latin_is_latin():
    assert is_filler(LOREM) and detect_language(LOREM) == UNKNOWN
    assert not is_filler(LATIN) and detect_language(LATIN) == "la"
    assert not is_filler(ENGLISH)


def test_a_mixed_document_is_named_by_what_most_of_it_is_written_in():
    text = "\n\n".join([GERMAN * 20, ENGLISH * 10])
    mix = language_mix(text)
    assert mix.language == "de" and mix.mixed
    assert mix.shares["de"] > mix.shares["en"] > 0.2


def test_latin_script_is_told_from_other_scripts():
    assert mostly_latin(ENGLISH) and mostly_latin("Müller & Söhne, Łódź")
    assert not mostly_latin(RUSSIAN) and not mostly_latin(JAPANESE)


def test_language_names_for_pages():
    assert language_name("de") == "German"
    assert language_name("ja") == "Japanese"
    assert language_name("la") == "Latin"
    assert language_name("") == ""


@pytest.mark.parametrize(("raw", "parsed"), [(None, None), ("", None), (" DE ", "de"), ("und", ""), ("ja", "ja")])
def test_a_language_filter_accepts_known_codes_and_und(raw, parsed):
    assert parse_language_code(raw) == parsed


@pytest.mark.parametrize(("raw", "reason"), [("xx", "not a language code"), ("german", "two letters"), ("d3", "two")])
def test_an_unknown_language_filter_says_why(raw, reason):
    with pytest.raises(ValueError, match=reason):
        parse_language_code(raw)
