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
        "Ульм": "location",  # "в Ульме": one word after "в", a place, read in the nominative
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


def test_japanese_common_nouns_in_katakana_are_words_not_entities():
    found = names(JAPANESE, "ja")
    assert "データベース" not in found and "エンジニア" not in found  # "database", "engineer"
    assert "16 GB" in found


# From a news article in mozilla/readability's test pages (test/test-pages/yahoo-4, Apache-2.0).
TREND_MICRO = (
    "トレンドマイクロは3月9日、Wi-Fi利用時の通信を暗号化し保護するスマホ・タブレット向けのセキュリティアプリ"
    "「フリーWi-Fiプロテクション」（iOS/Android）の発売を開始すると発表した。フリーWi-Fiプロテクションは、"
    "App Storeおよび、Google Playにて販売され、既に提供しているスマホ・タブレット向け総合セキュリティ対策アプリ"
    "「ウイルスバスター モバイル」と併用することで、不正アプリや危険なウェブサイトからの保護に加え、"
    "通信の盗み見を防ぐことができる。2020年の東京オリンピック・パラリンピックの開催などを見据え、"
)


def test_japanese_names_come_from_the_dictionarys_parts_of_speech():
    found = {item.name: item.type for item in neutral_spans(TREND_MICRO, "ja")}
    # Products named in 「」, a place, and Latin names that end where the kana begin.
    assert {"フリーWi-Fiプロテクション", "ウイルスバスター モバイル", "App Store", "Google Play"} <= set(found)
    assert found["東京"] == "location"
    # "app", "security", "freelance", "website": common nouns, however often they recur.
    assert not {"アプリ", "セキュリティ", "ウェブサイト"} & set(found)
    assert not any(name.endswith(("および", "にて")) for name in found)


def test_japanese_people_need_a_name_the_dictionary_knows_as_one():
    text = "山口百恵がブルガリアでダニエル・ピンクの本を読んだ。丸山さんも来た。クマが出た。"
    found = {item.name: item.type for item in neutral_spans(text, "ja")}
    assert found["山口百恵"] == "person"  # family and given name
    assert found["ダニエル・ピンク"] == "person"  # a foreign name in katakana parts
    assert found["丸山"] == "person"  # before an honorific ("丸山" alone is also a place)
    assert found["ブルガリア"] == "location"
    assert "クマ" not in found  # a given name, but first of all "bear"


def test_one_capitalised_word_inside_a_sentence_is_a_name_where_nouns_are_lower_case():
    french = "Nous avons visité le musée du Louvre à Paris avec Marie Dubois. Le lendemain, train pour Lyon."
    assert {"Louvre", "Paris", "Marie Dubois", "Lyon"} <= set(names(french, "fr"))
    assert "Le" not in names(french, "fr")
    # First in a line or a cell, or in capitals, a word is capitalised by its place or is a form's label.
    bill = "Facture\nAdresse | Montant\nMontant TVA 5,00\nTotal TTC 29,99"
    assert not {"Facture", "Adresse", "Montant", "TVA", "TTC", "Total"} & set(names(bill, "fr"))
    # German capitalises every noun: one capitalised word there is no name.
    assert names("Der Hund läuft über die Straße nach Hause.", "de") == []
    assert names("Der Reporter fuhr nach Mexiko.", "de") == ["Mexiko"]  # a country's name is one
    assert names("Die Daten liegen bei Dropbox und Google, die Rechnung bei Hund.", "de") == ["Dropbox", "Google"]
    # A word the text also writes in lower case is a common noun, capitalised for a heading or an
    # institution ("ministère des Affaires étrangères" beside "les affaires courantes").
    paper = "Voir les propriétés des opérateurs.\n3.3 Propriétés des opérateurs\nCes Propriétés tiennent."
    assert "Propriétés" not in names(paper, "fr")


def test_an_acronym_in_running_text_is_a_name_and_a_bills_labels_are_not():
    text = "Selon la CNIL, la NSA et l’OTAN surveillent. La CNIL proteste, et l’OTAN répond à la NSA."
    assert {"CNIL", "NSA", "OTAN"} <= set(names(text, "fr"))
    # Between numbers and other labels, a currency code, a regnal or chapter number, or once in a
    # form's footer: no names.
    bill = (
        "Montant EUR HT Montant TVA Montant EUR TTC\n29.99 € TTC\nTotal payé en EUR, puis en EUR.\n"
        "Voir le chapitre IV. Le chapitre IV suit.\nN° de TVA intra communautaire"
    )
    assert names(bill, "fr") == []
    # An elided article is not part of the name after it, and an elided particle joins a name's words.
    assert "Airbus" in names("Le contrat d’Airbus est signé.", "fr")
    found = names("Selon le Quai d’Orsay, la Place de l’Étoile est fermée.", "fr")
    assert {"Quai d'Orsay", "Place de l'Étoile"} <= set(found) and not {"Quai", "Orsay", "Étoile"} & set(found)


def test_a_name_known_by_itself_is_a_name_first_in_a_line_too():
    # An invoice's lines, as a Dutch shop's PDF reads (after invoice2data's coolblue1.pdf).
    invoice = "Factuur\nNintendo\n1 x Controller 59,99\nNederland\nTotaal 59,99"
    assert names(invoice, "nl") == ["Nintendo", "Nederland"]
    # A postcode's letters and a unit belong to their number, not to the name or word after them.
    address = "Weena 664\n3012 CN Rotterdam\n1 x Tablet 16 GB Zilver 429,00"
    found = names(address, "nl")
    assert "Rotterdam" in found and not {"CN Rotterdam", "GB Zilver", "Zilver"} & set(found)


def test_a_russian_adjective_alone_is_no_name():
    found = names("Он поступил в Высшее техническое училище в Цюрихе.", "ru")
    assert found == ["Цюрих"]


def test_a_family_name_alone_is_the_person_the_text_names_in_full():
    # After the report on the forgeries at Der Spiegel (2018), in German, where nouns are capitalised.
    text = "Der Reporter Juan Moreno hatte Zweifel. Bald liefert Moreno seine Texte. Das Heft liegt bei Moreno."
    found = [(item.name, item.key, item.type) for item in neutral_spans(text, "de")]
    key = canonical_key("Juan Moreno", "person")
    assert ("Moreno", key, "person") in found and ("Juan Moreno", key, "person") in found
    assert not any(name in {"Heft", "Texte", "Reporter"} for name, _, _ in found)
    # Two people of one family: a family name alone is neither.
    text = "Marie Curie und Pierre Curie forschten. Curie schrieb."
    assert "Curie" not in names(text, "de")


def test_a_single_name_is_a_place_by_its_preposition_or_as_a_country():
    spans = neutral_spans("Les secours sont arrivés au Népal depuis Paris, puis en Inde.", "fr")
    assert {item.name: item.type for item in spans}.items() >= {"Népal": "location", "Inde": "location"}.items()
    # Russian declines a country's name: "России" is Россия (Unicode CLDR's name, through babel).
    spans = neutral_spans("Он вернулся домой, и России это понравилось.", "ru")
    assert {item.name: item.type for item in spans} == {"Россия": "location"}


def test_a_declined_name_is_read_in_the_nominative_so_its_cases_are_one_entity():
    # After the Russian Wikipedia's article on Einstein, shortened.
    text = (
        "Альберт Эйнштейн родился в Ульме. Семья Альберта Эйнштейна переехала в Мюнхен. "
        "Из Мюнхена он уехал учиться. Позже друзья Эйнштейна звали его в Кострому."
    )
    found = {(item.name, item.key, item.type) for item in neutral_spans(text, "ru")}
    einstein = canonical_key("Альберт Эйнштейн", "person")
    assert {("Альберт Эйнштейн", einstein, "person"), ("Эйнштейн", einstein, "person")} <= found
    assert {name for name, _, kind in found if kind == "location"} == {"Ульм", "Мюнхен", "Кострома"}
    # Another language's names are kept as written.
    assert {"Einstein", "Munich"} <= set(names("La famille d'Einstein vivait à Munich.", "fr"))


def test_a_latin_word_in_a_japanese_sentence_is_a_name_unless_it_is_english():
    # From a blog feed in chardet's test files (tests/EUC-JP/arclamp.jp.xml), shortened.
    text = "Celeronだって、無線技術だって、インテル本体が作ったわけではありません。ServiceMixはJBIの実装です。Exceptionが出た。"
    found = {item.name for item in neutral_spans(text, "ja")}
    assert {"Celeron", "ServiceMix", "JBI"} <= found
    assert "Exception" not in found
    # A German sentence in the same chunk is not a Japanese one: its nouns are no names.
    mixed = "Der Hund läuft über die Straße. 東京の天気は晴れです。"
    assert {item.name for item in neutral_spans(mixed, "ja")} <= {"東京"}


def test_a_long_japanese_text_is_read_in_pieces_the_dictionary_accepts():
    text = "東京で会議がありました。\n" * 6000  # about 200 KB in UTF-8
    found = neutral_spans(text, "ja")
    assert found and all(item.name == "東京" for item in found)


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


def test_french_names_the_rules_cannot_type_take_the_french_recognisers_type():
    """A walk-through on real French documents found "Paris", "Londres" and "Molière" typed concept."""
    text = (
        "Après la Fronde, la troupe de Madeleine Béjart quitte Paris pour Londres. Le roi reçoit "
        "ensuite Jean-Baptiste Poquelin à Versailles, et le Sénat débat avec le Quai d’Orsay."
    )
    found = types(text, "fr")
    assert found["Paris"] == "location" and found["Londres"] == "location"
    assert found["Madeleine Béjart"] == "person" and found["Jean-Baptiste Poquelin"] == "person"
    assert found["Sénat"] == "organization"
    assert found["Quai d'Orsay"] == "location"  # named with a straight apostrophe
    # A memory's title before its text, which the recogniser calls a person: no given name, no one.
    assert types("Facture Free\n\nLe Sénat débat à Paris.", "fr").get("Facture Free") in (None, "concept")


def test_without_the_recogniser_french_names_keep_the_rules_types(monkeypatch, caplog):
    from graph.extraction import pipeline

    monkeypatch.setattr(pipeline, "LANGUAGE_MODELS", {"fr": "no_such_fr_model"})
    monkeypatch.setattr(pipeline, "_language_nlp", {})
    found = types("Le président François Hollande est parti de Paris pour Londres.", "fr")
    assert found["François Hollande"] == "person"  # a given name: the rules settle it
    assert found.get("Londres") in (None, "concept")
    assert "no entity recogniser" in caplog.text


def test_weekdays_months_and_a_legal_form_alone_are_no_names_in_any_language():
    """A walk-through found "Lundi" and "Dimanche" among a French invoice's entities (its opening hours)."""
    found = names(
        "Le service est ouvert du Lundi au Samedi, et le Dimanche à Paris. La société Free SAS, Limited.", "fr"
    )
    assert "Paris" in found and "Free SAS" in found
    assert not {"Lundi", "Samedi", "Dimanche", "Limited"} & set(found)
