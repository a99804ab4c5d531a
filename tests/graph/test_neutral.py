"""Entities outside English: the language-neutral rules, and the gate that keeps spaCy's English
pipeline to English text."""

from __future__ import annotations

from graph.extraction import extract_texts
from graph.extraction.batches import reads_english
from graph.extraction.keys import canonical_key
from graph.extraction.neutral import neutral_spans
from graph.extraction.typing import type_for_name

GERMAN = (
    "Die Deutsche Bahn hat gestern mitgeteilt, dass Angela Merkel in Berlin war. Gestern Abend kam Herr "
    "Müller, und die Funktion parse_config() liest die Datei mit 16 GB Speicher."
)
RUSSIAN = (
    "Итого по накладным. Московский Государственный Университет подписал договор с компанией Яндекс "
    "Маркет. ИТОГО НАКЛАДНЫЕ РАСХОДЫ: 15000 рублей."
)
SPANISH = "La Universidad de Chile y el Banco Central firmaron. El presidente Gabriel Boric habló en Santiago de Chile."
JAPANESE = "データベースの設計について、マイクロソフトのエンジニアがデータベースを議論しました。メモリは16 GBです。"


def names(text: str, language: str) -> list[str]:
    return [item.name for item in neutral_spans(text, language)]


def test_capitalised_multi_word_names_are_found_without_articles_or_sentence_starts():
    found = names(GERMAN, "de")
    assert {"Deutsche Bahn", "Angela Merkel", "Herr Müller"} <= set(found)
    assert not any(name.startswith(("Die ", "Gestern")) for name in found)


def test_code_identifiers_and_numbers_with_units_are_found():
    found = names(GERMAN, "de")
    assert "parse_config" in found and "16 GB" in found


def test_cyrillic_names_are_found_and_headings_in_capitals_are_not():
    found = names(RUSSIAN, "ru")
    assert {"Московский Государственный Университет", "Яндекс Маркет"} <= set(found)
    assert not any("ИТОГО" in name or "Итого" in name or "Накладн" in name for name in found)


def test_name_particles_stay_inside_a_name():
    assert {"Universidad de Chile", "Banco Central", "Gabriel Boric", "Santiago de Chile"} <= set(names(SPANISH, "es"))


def types(text: str, language: str) -> dict[str, str]:
    return {item.name: item.type for item in neutral_spans(text, language)}


def test_a_names_own_words_type_it_in_any_language():
    german = (
        "Die Rechnung kam von der LoogBerry GmbH, Konto bei der Kreissparkasse Gelnhausen. "
        "Geschäftsführer Markus Oestreicher unterschrieb; eingetragen beim Registergericht Hanau."
    )
    assert types(german, "de") == {
        "LoogBerry GmbH": "organization",  # a legal form
        "Kreissparkasse Gelnhausen": "organization",  # an institution's word, joined to the front
        "Markus Oestreicher": "person",  # a given name and a surname; the role before it left out
        "Registergericht Hanau": "organization",
    }
    assert types(SPANISH, "es")["Universidad de Chile"] == "organization"
    assert types(SPANISH, "es")["Gabriel Boric"] == "person"
    french = "Le président François Hollande a reçu Free SAS sous Louis XIV et la RCS Paris."
    assert types(french, "fr") == {
        "François Hollande": "person",
        "Free SAS": "organization",
        "Louis XIV": "person",  # a regnal number is no acronym
        "RCS Paris": "concept",  # no given name, no legal form: nothing settles it
    }
    assert types(RUSSIAN, "ru")["Московский Государственный Университет"] == "organization"
    russian = "Альберт Эйнштейн родился в Ульме. Российская Федерация и Мария Кюри."
    assert types(russian, "ru") == {
        "Альберт Эйнштейн": "person",  # a given name in Cyrillic letters ("Albert")
        "Российская Федерация": "organization",  # a federation
        "Мария Кюри": "person",
    }
    spanish = "La Coordinadora Arauco-Malleco escribió a la Unión Europea desde la Plaza Unión."
    assert types(spanish, "es")["Coordinadora Arauco-Malleco"] == "organization"
    assert types(spanish, "es")["Unión Europea"] == "organization"  # a union of states
    assert types(spanish, "es").get("Plaza Unión") != "organization"  # a square
    assert types("Wir trafen uns am Union Square in San Francisco.", "de").get("Union Square") != "organization"


def test_the_retyping_pass_keeps_what_a_names_own_words_settle():
    # What graph_owner_retype applies to stored entities must not undo the rules above.
    def retyped(name: str, entity_type: str) -> str | None:
        return type_for_name(name, canonical_key(name, entity_type), entity_type)

    assert retyped("LoogBerry GmbH", "concept") == "organization"  # a legal form, whatever the shape
    assert retyped("Coolblue B.V.", "concept") == "organization"
    assert retyped("Louis XIV", "person") == "person"  # a regnal number is no acronym
    assert retyped("MD Anderson", "person") == "concept"  # an acronym opening the name is
    assert retyped("iPhone SE", "product") != "organization"  # SE is an edition here, not a company
    assert retyped("Day Spa", "concept") != "organization"
    assert retyped("Terry Ave North", "person") == "location"  # an address, not a person
    assert retyped("Terry Lane", "person") == "location"


def test_japanese_gives_recurring_katakana_terms_not_one_huge_word():
    found = names(JAPANESE, "ja")
    assert "データベース" in found and "16 GB" in found
    assert all(len(name) < 12 for name in found)


def test_only_english_or_unknown_latin_text_reaches_the_english_pipeline():
    assert reads_english("Guido van Rossum created Python.", "")
    assert reads_english("Plain English text.", "en")
    assert not reads_english(GERMAN, "de")
    assert not reads_english("Привет, как дела", "")


def test_lorem_ipsum_filler_names_nothing():
    (filler,) = extract_texts(
        ["Lorem ipsum dolor sit amet, consectetur adipiscing elit. Cras vel nulla. Donec sed morbi amet."]
    )
    assert filler.mentions == []


def test_a_russian_chunk_gets_no_english_ner_entities_and_an_english_one_does():
    russian, english = extract_texts([RUSSIAN, "Angela Merkel met Tim Cook in Berlin to discuss Apple."])
    assert {m.name for m in russian.mentions} >= {"Яндекс Маркет"}
    assert all(m.type in ("concept", "technology", "organization") for m in russian.mentions)
    assert {("Angela Merkel", "person"), ("Berlin", "location")} <= {(m.name, m.type) for m in english.mentions}
