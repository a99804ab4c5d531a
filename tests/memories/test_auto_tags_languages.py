"""Auto tags outside English: the text's own stop-words, no filler or mojibake tags, and keywords of
scripts written without spaces."""

from __future__ import annotations

import pytest

from memories.auto_tags import auto_tags_for, content_keywords, keyword_tag, mojibake, text_languages

GERMAN = (
    "Die Steuererklärung und der Bescheid des Finanzamts sind da. Die Steuererklärung wurde im März "
    "abgegeben, und der Bescheid sei korrekt. Das Finanzamt erstattet die Lohnsteuer und die "
    "Kirchensteuer, und die Erstattung kommt im April."
)
LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Sed do eiusmod tempor incididunt ut labore "
    "et dolore magna aliqua. Morbi nulla facilisi. Nulla amet sed morbi tristique senectus et netus."
)
RUSSIAN = (
    "Поставщик подтвердил отгрузку товара на склад. Накладная на поставку подписана, склад принял "
    "товар, и поставщик выставил счёт за поставку."
)
JAPANESE = (
    "東京都のデータベース移行について。データベースの設計を東京都のエンジニアが確認しました。"
    "移行後、データベースの検索は速くなりました。エンジニアは索引を作り直しました。"
)
CHINESE = "北京的数据库迁移已经完成。数据库的性能很重要，北京的团队重建了索引。"


def tags(text: str) -> list[str]:
    return [item["tag"] for item in content_keywords(text, limit=6)]


def test_german_text_is_tagged_without_german_stop_words():
    found = tags(GERMAN)
    assert found and not {"und", "sei", "der", "die", "das"} & {w for t in found for w in t.split("-")}
    assert any("steuererklärung" in t or "finanzamt" in t for t in found)


def test_lorem_ipsum_gets_no_keyword_tags():
    assert tags(LOREM) == []
    # Nor does a filler paragraph pasted into a real note give "amet" or "morbi".
    note = "Quarterly budget review for the design team. " + LOREM
    assert not {"sed", "amet", "nulla", "morbi", "lorem", "ipsum"} & {w for t in tags(note) for w in t.split("-")}


def test_russian_text_is_tagged_with_russian_words_and_no_stop_words():
    found = tags(RUSSIAN)
    assert found and all(not {"и", "на", "за"} & set(t.split("-")) for t in found)


@pytest.mark.parametrize("text", [JAPANESE, CHINESE])
def test_scripts_without_spaces_give_words_not_whole_sentences(text):
    found = tags(text)
    assert found, text
    assert all(len(tag) <= 8 for tag in found), found


def test_japanese_keywords_are_its_recurring_terms():
    found = tags(JAPANESE)
    assert "データベース" in found and "東京都" in found


def test_mojibake_is_never_a_tag():
    assert mojibake("Ã¼ber") and mojibake("ÐŸÑ€Ð¸Ð²ÐµÑ‚") and mojibake("caf\ufffd")
    assert not mojibake("über") and not mojibake("naïve") and not mojibake("привет")
    assert keyword_tag("Ã¼bersicht") is None


def test_a_short_note_loses_the_stop_words_of_the_language_it_most_likely_is():
    assert "de" in text_languages("Termin und Ort")


def test_english_tags_are_as_before():
    found = tags("We migrated the Postgres database to a new server and rebuilt the HNSW index for vector search.")
    assert "hnsw-index" in found and "vector-search" in found


RUSSIAN_NAMES = (
    "Альберт Эйнштейн родился в Ульме. Семья Альберта Эйнштейна переехала в Мюнхен, а позже в Италию, "
    "близ Милана. Юность Альберта Эйнштейна прошла в Мюнхене и близ Милана; в гимназии Мюнхена он не был в "
    "числе первых учеников. Москва — столица России и центр Московской области. В Москве живёт больше "
    "людей, чем в любом другом городе России."
)


def test_russian_tags_are_in_the_nominative_with_no_inflected_duplicates():
    found = [item["tag"] for item in auto_tags_for(source="upload", metadata={}, content=RUSSIAN_NAMES)]
    assert {"альберт-эйнштейн", "милан", "россия"} <= set(found)
    inflected = {"альберта-эйнштейна", "эйнштейна", "альберта", "милана", "близ-милана", "россии", "москве"}
    assert not inflected & set(found)
    words = [word for tag in found for word in tag.split("-")]
    assert len(words) == len(set(words))


@pytest.mark.parametrize(("phrase", "tag"), [("qu'il", None), ("l'homme", "homme"), ("dell'arte", "arte")])
def test_an_elided_french_or_italian_word_is_the_word_after_it(phrase, tag):
    assert keyword_tag(phrase, stop=frozenset({"il"})) == tag


def test_a_mails_header_lines_give_it_no_tags():
    """ "date" and "utc" were a mail's tags, from its Date line."""
    content = (
        "From: Mallori Harrell <mallori@example.com>\nTo: All <all@example.com>\nDate: 2022-12-21 16:28 UTC\n\n"
        "Get excited for our first annual family day! There will be face painting, a petting zoo, funnel "
        "cake and more. Make sure to RSVP!"
    )
    tags = {item["tag"] for item in auto_tags_for(source="upload", metadata={}, content=content)}
    assert not tags & {"date", "utc", "mallori", "harrell", "example", "mallori-harrell"}, tags
    assert "zoo" in tags or "petting-zoo" in tags, tags


@pytest.mark.parametrize(("phrase", "language"), [("juillet", "fr"), ("Montag", "de"), ("facture juillet", "fr")])
def test_month_and_weekday_names_of_other_languages_are_no_tags(phrase, language):
    assert keyword_tag(phrase, language=language) is None
