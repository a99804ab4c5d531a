"""Plain text: legacy encodings detected and stored correctly, text in several scripts kept intact."""

from __future__ import annotations

import pytest

from memories.parsers import ExtractionError, extract
from memories.parsers.text import decode, looks_like_text

RUSSIAN = "Компания Аскат предлагает широкий выбор товаров и услуг для дома и офиса. Мы работаем с 1995 года.\n"
JAPANESE = "東京は晴れです。今日は会議があります。日本語のテキストファイルです。\n"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (RUSSIAN, "cp1251"),
        (RUSSIAN, "koi8_r"),
        ("Україна — держава у Східній Європі. Столиця — Київ. Їжак і ґанок.\n", "cp1251"),
        ("България е държава в Югоизточна Европа, на Балканския полуостров.\n", "cp1251"),
        (JAPANESE, "shift_jis"),
        (JAPANESE, "euc_jp"),
        (JAPANESE, "iso2022_jp"),
        ("这是一个简体中文的文本文件，用于测试编码检测是否正确。\n", "gb18030"),
        ("這是一個繁體中文的文字檔案，用於測試編碼偵測是否正確。\n", "big5"),
        ("한국어는 대한민국의 공용어이다. 한글로 표기한다.\n", "euc_kr"),
        ("Η Ελλάδα είναι χώρα της νοτιοανατολικής Ευρώπης, με πρωτεύουσα την Αθήνα.\n", "cp1253"),
        ("اللغة العربية هي إحدى أكثر اللغات انتشارا في العالم.\n", "cp1256"),
        ("Zażółć gęślą jaźń. Polska jest państwem w Europie Środkowej, nad Bałtykiem.\n", "cp1250"),
        ("Příliš žluťoučký kůň úpěl ďábelské ódy. Česká republika leží ve střední Evropě.\n", "cp1250"),
        ("Le café était crème et la façade de l'hôtel, très élégante, donnait sur la place.\n", "cp1252"),
        ("A informação está disponível na região, não é? Ação e coração, São Paulo.\n", "cp1252"),
        ("El niño comió una manzana en la montaña. ¿Dónde está la estación? ¡Qué día!\n", "cp1252"),
    ],
    ids=lambda value: value if len(value) < 12 else None,
)
def test_a_legacy_encoding_is_detected_and_the_text_stored_as_written(text, encoding):
    assert extract("notes.txt", text.encode(encoding)).text == text


def test_a_short_cyrillic_line_is_not_read_as_a_rarer_code_page():
    assert decode("Київ — столиця України.\n".encode("cp1251")) == "Київ — столиця України.\n"
    assert decode("Привет, как дела у тебя?\n".encode("cp1251")) == "Привет, как дела у тебя?\n"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"])
def test_text_in_several_scripts_at_once_stays_intact(encoding):
    text = (
        "Meeting notes / Протокол встречи / 会議メモ\n"
        "Alice (Алиса) will send the 見積書 by Friday; Борис reviews it.\n"
        "العربية و עברית on one line, then Ελληνικά.\n"
    )
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):
        data = ("\ufeff" + text).encode(encoding)
    assert extract("mixed.txt", data).text == text


def test_latin_and_cyrillic_in_one_legacy_file_stay_intact():
    text = "Order 2024-17: Ноутбук Lenovo ThinkPad, 2 шт., доставка в Москву, оплата по счёту.\n"
    assert extract("order.txt", text.encode("cp1251")).text == text


def test_the_text_sniff_accepts_text_and_refuses_binary():
    assert looks_like_text(RUSSIAN.encode("cp1251"))
    assert looks_like_text(("line of text\n" * 10_000).encode())
    assert looks_like_text(("a" + "é" * 40_000).encode())  # the sample ends inside a character
    assert not looks_like_text(bytes(range(256)) * 4)
    assert not looks_like_text(b"\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f" * 100)


def test_many_control_characters_make_a_file_binary():
    with pytest.raises(ExtractionError, match="not text"):
        extract("junk.txt", b"text \x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f" * 50)


def test_a_txt_file_is_titled_by_the_heading_line_it_opens_with_and_keeps_it_in_its_text():
    text = "La creación\r\n\r\n1 En el principio creó Dios los cielos y la tierra.\r\n"
    result = extract("genesis-es.txt", text.encode())
    assert result.title == "La creación"
    assert result.text == text.replace("\r\n", "\n")
    assert extract("genesis-es.txt", b"In the beginning.\n\nMore.").title is None


def test_source_code_is_never_titled_by_its_first_line():
    assert extract("deploy.sh", b"#!/bin/sh\n\nset -e\n").title is None
    assert extract("notes.rst", b"Release notes\n\nFixed.\n").title is None
