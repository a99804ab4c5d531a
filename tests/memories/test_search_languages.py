"""The lexical index in every language: each chunk stemmed in its own language's config, CJK runs as
character pairs, a query read in the languages the owner's index holds, and meaning alone a good
match only in a language the embedding model reads."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memories.models import ChunkTerm, CorpusStat, Memory, MemoryChunk, TermStat
from memories.search import hybrid_search, lexical, relevance
from memories.services import memories_autotag, memory_delete
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

EINSTEIN = (
    "Альберт Эйнштейн родился в Ульме. Детство провёл в Мюнхене, где учился в гимназии. "
    "Позже семья переехала в Италию, близ Милана."
)
AESOP = (
    "肉をくわえたイヌが橋を渡っていました。ふと下を見ると、川の中にも肉をくわえたイヌがいます。"
    "イヌはその肉も欲しくなって吠えました。"
)
DENTIST_DE = (
    "Der Zahnarzttermin ist am Dienstag um 15 Uhr in der Praxis am Markt. "
    "Bitte die Versichertenkarte mitbringen, die Rechnungen kommen per Post."
)
FREE_FR = (
    "Votre facture Free du mois de mars est disponible dans votre espace abonné. "
    "Le montant sera prélevé sur votre compte bancaire le cinq avril."
)
NEWS_EN = "The new printer on the second floor jams on heavy paper; use the tray on the left for labels."


def titles(response):
    return [r.title for r in response.results]


@pytest.fixture
def collection(user):
    return {
        title: make_memory(user, content, title=title)
        for title, content in (
            ("Эйнштейн", EINSTEIN),
            ("イソップ", AESOP),
            ("Zahnarzt", DENTIST_DE),
            ("Facture", FREE_FR),
            ("Printer", NEWS_EN),
        )
    }


def lexemes(memory) -> set[str]:
    return set(ChunkTerm.objects.filter(chunk__memory=memory).values_list("lexeme", flat=True))


def test_a_chunk_is_stemmed_in_its_language_and_its_terms_carry_it(user, collection):
    assert {"ru:мюнхен", "ru:гимназ"} <= lexemes(collection["Эйнштейн"])
    assert {"de:rechnung", "de:versichertenkart"} <= lexemes(collection["Zahnarzt"])
    assert "fr:factur" in lexemes(collection["Facture"])
    # English keeps bare terms, as before languages were read.
    assert {"printer", "label"} <= lexemes(collection["Printer"])
    assert CorpusStat.objects.get(owner=user).languages == ["de", "fr", "ru"]


def test_cjk_runs_are_indexed_as_character_pairs(user, collection):
    terms = lexemes(collection["イソップ"])
    assert {"肉を", "をく", "イヌ", "吠え"} <= terms
    assert not any(len(term) > 2 for term in terms if lexical.is_cjk(term))


def test_an_inflected_word_finds_its_document_in_russian_and_german(user, collection):
    assert titles(hybrid_search(user.pk, "Мюнхен")) == ["Эйнштейн"]  # the text says "в Мюнхене"
    assert titles(hybrid_search(user.pk, "гимназия в Мюнхене")) == ["Эйнштейн"]
    assert titles(hybrid_search(user.pk, "Rechnung Versichertenkarten")) == ["Zahnarzt"]


def test_a_japanese_word_inside_a_sentence_is_found_and_marked(user, collection):
    response = hybrid_search(user.pk, "イヌ")
    assert titles(response) == ["イソップ"]
    assert "<mark>イヌ</mark>" in response.results[0].snippet_html
    assert response.query_terms == ["イヌ"]


def test_the_terms_shown_and_marked_carry_no_language_prefix(user, collection):
    response = hybrid_search(user.pk, "facture Free")
    assert titles(response)[0] == "Facture"
    assert response.query_terms == ["factur", "fre"]  # both as the French text holds them
    assert "<mark>facture</mark>" in response.results[0].snippet_html


def test_a_word_another_language_stems_alike_is_kept_apart_and_no_good_match_alone(user):
    french = make_memory(user, "Les news du jour parlent de la météo et des élections à Paris cette semaine.")
    make_memory(user, NEWS_EN, title="Printer")
    assert french.language == "fr"
    assert "fr:new" in lexemes(french) and "new" not in lexemes(french)  # French stems "news" to "new"
    response = hybrid_search(user.pk, "new printer")
    # The query's "new" is read in both languages the account holds, but half a query found in a
    # language the model does not read is not most of it: no good match.
    assert titles(response) == ["Printer"]


def test_a_stop_word_of_the_query_language_is_not_a_word_to_find(user, collection):
    # "в" and "где" are Russian stop words; English would keep them as words no chunk holds.
    response = hybrid_search(user.pk, "где учился в гимназии Эйнштейн")
    assert titles(response)[0] == "Эйнштейн"
    assert response.results[0].parts["idfShare"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("readings", "query_prefix", "expected"),
    [
        # English alone: every word as english reads it, one group each.
        ([("", "tax", 1, 0), ("", "brazil", 3, 2)], "", [["tax"], ["brazil"]]),
        # The readings the index holds make the word; its own form counts beside its stem.
        ([("", "мюнхен", 1, 0), ("ru", "мюнх", 1, 0), ("ru~", "мюнхен", 1, 3)], "", [["ru:мюнхен"]]),
        ([("", "rechnung", 1, 0), ("de", "rechnung", 1, 4), ("fr", "rechnung", 1, 0)], "", [["de:rechnung"]]),
        # Held in two languages: both, most frequent first, as one word.
        ([("", "system", 1, 2), ("de", "system", 1, 9), ("de~", "system", 1, 9)], "", [["de:system", "system"]]),
        # A stop word of the query's language goes, even where another language holds the word.
        ([("", "die", 1, 5), ("", "rechnung", 2, 0), ("de", "rechnung", 2, 1)], "de", [["de:rechnung"]]),
        # Nobody holds it and one language calls it a stop word: it goes.
        ([("", "le", 1, 0), ("", "factur", 2, 0), ("fr", "factur", 2, 2)], "", [["fr:factur"]]),
        # Nobody holds it and no language calls it a stop word: it stays, in english, and is missed.
        ([("", "borscht", 1, 0), ("ru", "borscht", 1, 0)], "", [["borscht"]]),
        # CJK readings are left to the pairs.
        ([("", "肉をくわえた犬", 1, 0)], "", []),
    ],
)
def test_choose_readings(readings, query_prefix, expected):
    prefixes = sorted({prefix.rstrip("~") for prefix, *_ in readings})
    assert lexical.choose_readings(readings, prefixes=prefixes, query_prefix=query_prefix) == expected


def test_a_question_word_of_the_query_language_that_nobody_holds_is_not_a_word_to_find():
    # "wer" is no Snowball stop word; the caller lists it as a German question word.
    readings = [
        ("", "wer", 1, 0),
        ("de", "wer", 1, 0),
        ("de~", "wer", 1, 0),
        ("", "steckt", 2, 0),
        ("de", "steckt", 2, 0),
        ("de~", "steckt", 2, 0),
        ("", "moskva", 3, 0),
        ("de", "moskva", 3, 2),
        ("de~", "moskva", 3, 2),
    ]
    chosen = lexical.choose_readings(readings, prefixes=["", "de"], query_prefix="de", query_stop_words={"wer"})
    assert chosen == [["steckt"], ["de:moskva"]]


def test_a_question_word_of_the_query_language_is_not_a_word_to_find_but_a_name_is(user, collection):
    # "wann" is no Snowball stop word; it is a German question word. "Москва" stays a word to find.
    make_memory(user, "Wer hat das gesagt? Niemand weiß es. " * 3, title="Wer")
    terms = lexical.query_terms(user.pk, "Wann wird die Rechnung bezahlt?", languages=["de", "ru"], query_language="de")
    assert terms == [["de:rechnung"], ["bezahlt"]]  # a word nobody holds stays, in english
    terms = lexical.query_terms(user.pk, "аэропорты Москва", languages=["ru"], query_language="ru")
    assert ["москва"] in terms  # kept (held by no reading here, so in english)


def test_cjk_pairs():
    assert lexical.cjk_pairs("肉をくわえた") == ["肉を", "をく", "くわ", "わえ", "えた"]
    assert lexical.cjk_pairs("犬 and 猫") == ["犬", "猫"]
    assert lexical.cjk_pairs("no CJK here") == []


def test_an_english_only_owner_reads_its_queries_in_the_statement_as_before(user):
    make_memory(user, NEWS_EN, title="Printer")
    assert CorpusStat.objects.get(owner=user).languages == []
    assert not lexical.needs_readings("printer labels", [], "")
    assert lexical.needs_readings("イヌ", [], "")
    assert lexical.needs_readings("printer", ["de"], "")


def test_meaning_alone_is_a_good_match_only_in_a_language_the_model_reads():
    limits = (0.34, 0.40, 0.28)
    meaning = {"hybrid": 0.33, "vector": 0.47, "idf_share": 0.0, "limits": limits}
    assert relevance.passes(**meaning, language="en")
    assert relevance.passes(**meaning, language="")
    assert not relevance.passes(**meaning, language="fr")
    # Most of the query's words found count in any language, whatever the hybridScore; fewer do not.
    assert relevance.passes(hybrid=0.2, vector=0.05, idf_share=1.0, limits=limits, language="ja")
    assert relevance.passes(hybrid=0.2, vector=0.05, idf_share=0.6, limits=limits, language="ja")
    assert not relevance.passes(hybrid=0.3, vector=0.05, idf_share=0.3, limits=limits, language="ja")
    assert relevance.passes(hybrid=0.41, vector=0.3, idf_share=0.5, limits=limits, language="de")
    # Nor for a query in another language, whatever the passage's ("recette de la tarte Tatin" is no
    # closer in meaning to an English text than any other French words).
    assert not relevance.passes(**meaning, language="en", query_language="fr")
    assert relevance.passes(hybrid=0.2, vector=0.05, idf_share=1.0, limits=limits, language="en", query_language="fr")


def test_a_french_query_finds_no_english_note_by_meaning_alone(user, collection):
    response = hybrid_search(user.pk, "recette de la tarte Tatin aux pommes")
    assert response.results == []


def _index_state(owner_id: int):
    """The owner's postings (without their impacts, which depend on the average length when they
    were written), totals and document frequencies."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT chunk_id, lexeme, tf FROM memories_chunkterm WHERE owner_id = %s ORDER BY 1, 2", [owner_id]
        )
        postings = cursor.fetchall()
    stat = CorpusStat.objects.get(owner_id=owner_id)
    df = sorted(TermStat.objects.filter(owner_id=owner_id, df__gt=0).values_list("lexeme", "df"))
    return postings, (stat.chunk_count, stat.total_length), df


def test_deleting_a_memory_in_another_language_takes_out_exactly_what_it_added(user, collection):
    make_memory(user, NEWS_EN.replace("printer", "scanner"), title="Scanner")
    memory_delete(memory=collection["Эйнштейн"])  # to the trash: out of the index
    Memory.objects.filter(pk=collection["イソップ"].pk).delete()
    _, totals, df = _index_state(user.pk)
    lexical.reindex_owner(user.pk)
    _, rebuilt_totals, rebuilt_df = _index_state(user.pk)
    assert totals == rebuilt_totals
    assert df == rebuilt_df


def test_chunks_whose_language_is_read_later_are_indexed_again_in_it(user):
    memory = make_memory(user, DENTIST_DE, title="Alt")
    other = make_memory(user, NEWS_EN, title="Printer")
    # As stored before languages were read: no language, indexed in english.
    Memory.objects.filter(pk=memory.pk).update(language=None)
    MemoryChunk.objects.filter(memory=memory).update(language=None)
    lexical.reindex_owner(user.pk)
    assert "rechnungen" in lexemes(memory)
    memories_autotag(memory_ids=[memory.pk, other.pk])
    assert "de:rechnung" in lexemes(memory) and "rechnungen" not in lexemes(memory)
    assert CorpusStat.objects.get(owner=user).languages == ["de"]
    state = _index_state(user.pk)
    lexical.reindex_owner(user.pk)
    assert _index_state(user.pk) == state
    assert titles(hybrid_search(user.pk, "Rechnung")) == ["Alt"]


def test_reindex_keywords_rebuilds_an_account_to_what_indexing_wrote(user, other_user, collection):
    make_memory(other_user, NEWS_EN, title="Printer")
    before = _index_state(user.pk)
    ChunkTerm.objects.filter(owner=user).delete()
    TermStat.objects.filter(owner=user).delete()
    out = StringIO()
    call_command("reindex_keywords", "--user", user.username, stdout=out)
    assert json.loads(out.getvalue().splitlines()[-1])["accounts"] == 1
    assert _index_state(user.pk) == before
    assert titles(hybrid_search(user.pk, "Мюнхен")) == ["Эйнштейн"]


def test_reindex_keywords_names_an_unknown_user():
    with pytest.raises(CommandError, match="no such user: nobody"):
        call_command("reindex_keywords", "--user", "nobody", stdout=StringIO())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("mum phone number", ""),  # read as Latin, which has no config: English it stays
        ("tooth doctor", ""),
        ("Wann kommt die Rechnung für den Zahnarzttermin?", "de"),
        ("イヌ", "other"),  # too short to tell, but no Latin letters: not a language the model reads
        ("лечение кариеса", "other"),
        ("???", ""),
    ],
)
def test_the_query_language_the_good_match_rule_reads(query, expected):
    from core.language import detect_language
    from memories.search.hybrid import _query_language

    assert _query_language(query, detect_language(query)) == expected


def test_latin_words_and_numbers_beside_japanese_are_words_of_their_own(user):
    memory = make_memory(user, "週末にPythonの本を読みました。iPhone 15で写真を撮りました。", title="週末")
    assert {"python", "iphon", "15", "読み", "写真"} <= lexemes(memory)
    response = hybrid_search(user.pk, "Python")
    assert titles(response) == ["週末"]
    assert "<mark>Python</mark>の本" in response.results[0].snippet_html


def test_a_word_written_in_two_languages_finds_both_and_counts_once(user):
    english = make_memory(user, "The build system needs an update before the release on Friday.", title="Build")
    german = make_memory(
        user,
        "Das System braucht ein Update vor der Veröffentlichung. Das System läuft auf dem Server im Keller.",
        title="Server",
    )
    assert german.language == "de" and english.language == "en"
    response = hybrid_search(user.pk, "system update", min_score=0)
    by_title = {r.title: r for r in response.results}
    assert {"Build", "Server"} <= set(by_title)
    for title in ("Build", "Server"):
        assert by_title[title].parts["idfShare"] == pytest.approx(1.0)  # both words, each counted once


def test_a_query_of_ordinary_words_keeps_them_whatever_its_language(user, collection):
    # Only question words go: "tiempo de trabajo nuevo" is no list of function words.
    terms = lexical.query_terms(user.pk, "tiempo de trabajo nuevo", languages=["es"], query_language="es")
    assert terms == [["tiempo"], ["trabajo"], ["nuevo"]]  # held by no reading here: english; "de" is a stop word


def test_a_language_this_postgresql_has_no_config_for_keeps_the_english_config(monkeypatch):
    monkeypatch.setitem(lexical.SNOWBALL, "tlh", "klingon")
    lexical.stemmed_languages.cache_clear()
    try:
        assert "tlh" not in lexical.stemmed_languages()
        assert lexical.language_prefix("tlh") is None
        assert "klingon" not in lexical._config_sql("f.language")
        assert lexical.language_prefix("de") == "de"
    finally:
        lexical.stemmed_languages.cache_clear()


def test_a_cjk_query_is_searched_by_a_bounded_number_of_pairs(user, collection):
    query = "".join(chr(0x4E00 + i) for i in range(2000))
    terms = lexical.query_terms(user.pk, query, languages=[], query_language="")
    assert len(terms) == lexical.MAX_QUERY_PAIRS
    assert hybrid_search(user.pk, query).results == []


def test_a_search_reads_its_query_once_and_a_second_look_reuses_the_reading(user, collection, monkeypatch):
    from memories import embedding
    from memories.search import statement
    from memories.search.filters import SearchFilters

    reads = []
    real_read = statement.lexical.read_words
    monkeypatch.setattr(statement.lexical, "read_words", lambda *a, **k: reads.append(1) or real_read(*a, **k))
    assert titles(hybrid_search(user.pk, "Rechnung")) == ["Zahnarzt"]
    assert len(reads) == 1
    reading = statement.read_query(user.pk, "Rechnung")
    assert len(reads) == 2 and reading.terms == [["de:rechnung"]]
    qvec = embedding.embed_query("Rechnung")
    statement.search_candidates(user.pk, "Rechnung", qvec, limit=5, filters=SearchFilters(), reading=reading)
    assert len(reads) == 2, "the second look of a search is given the reading and does not read again"


UDHR_ES = (
    "Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como están de "
    "razón y conciencia, deben comportarse fraternalmente los unos con los otros. Toda persona tiene "
    "todos los derechos y libertades proclamados en esta Declaración, sin distinción alguna de raza, "
    "color, sexo, idioma, religión, opinión política o de cualquier otra índole."
)
VAN_NL = "De huurprijs van de bestelbus is veertig euro per dag, exclusief brandstof en verzekering."


@pytest.mark.parametrize(
    ("query", "foreign"),
    [
        ("receta de paella valenciana", True),  # "de" is Spanish's, and the model knows no other word whole
        ("recette de la tarte Tatin", True),
        ("Hetzner invoice for a dedicated server", False),  # "for", "a": English's little words
        ("van rental prices", False),  # "van" is Dutch's, but the model reads "rental prices" as English
        ("pasta al dente timing", False),
        ("tarte tatin recipe", False),  # no little word of any language: nothing says it is not English
    ],
)
def test_a_query_the_detector_cannot_tell_reads_as_another_language_by_its_little_words(user, query, foreign):
    from memories.search import statement

    for title, content in (("Declaración", UDHR_ES), ("Bestelbus", VAN_NL), ("Facture", FREE_FR), ("Printer", NEWS_EN)):
        make_memory(user, content, title=title)
    reading = statement.read_query(user.pk, query)
    assert reading.language == "" or not foreign  # the detector did not tell these
    assert reading.foreign is foreign
    if foreign:  # its little words are no words to find
        assert not {"de", "la"} & {lexical.display_term(term) for group in reading.terms for term in group}


def test_a_spanish_query_the_detector_cannot_tell_finds_no_passage_by_its_little_words(user):
    """ "de" is a Spanish stop word, but an English note holds it too ("Charles de Gaulle"): searched
    for, it made that note a partial match for a paella recipe. The query reads as Spanish by its
    little words, so "de" is not searched for, and meaning alone is no good match for it."""
    make_memory(user, UDHR_ES, title="Declaración")
    make_memory(
        user, "Flights to Paris land at Charles de Gaulle airport; the RER B goes to the centre.", title="Paris"
    )
    response = hybrid_search(user.pk, "receta de paella valenciana", min_score=0)
    assert response.query_terms == ["receta", "paella", "valenciana"]
    assert all(result.parts["idfShare"] == 0 for result in response.results)
    assert hybrid_search(user.pk, "receta de paella valenciana").results == []
    assert titles(hybrid_search(user.pk, "derechos y libertades")) == ["Declaración"]
