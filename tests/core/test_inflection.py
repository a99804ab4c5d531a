"""Russian keyword phrases read in the nominative (core.inflection.nominative_phrase)."""

from __future__ import annotations

import pytest

from core.inflection import lemma, nominative_phrase


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        # A name in the nominative, each of its parts.
        ("альберта эйнштейна", "альберт эйнштейн"),
        # A preposition at the start is dropped.
        ("близ милана", "милан"),
        ("в москве", "москва"),
        ("россии", "россия"),
        # Adjectives agree with the head noun in gender and number.
        ("центрального федерального округа", "центральный федеральный округ"),
        ("московской области", "московская область"),
        ("высшего технического училища", "высшее техническое училище"),
        # The head noun goes to the singular, unless it is only used in the plural.
        ("первых учеников", "первый ученик"),
        ("ножниц", "ножницы"),
        # A complement after the head stays as written.
        ("версия издания", "версия издания"),
        ("центр московской", "центр московской"),
        # Adjectives without their noun: nominative, masculine where the ending allows it.
        ("центрального федерального", "центральный федеральный"),
        # No noun phrase (a verb and its object): as written.
        ("пережить новогоднюю", "пережить новогоднюю"),
        # A word the dictionary does not know stays as written, and so does the phrase it heads.
        ("квирклзорпа", "квирклзорпа"),
        ("квирклзорпа москвы", "квирклзорпа москвы"),
    ],
)
def test_a_russian_phrase_is_read_in_the_nominative(phrase, expected):
    assert " ".join(nominative_phrase(phrase.split(), "ru")) == expected


@pytest.mark.parametrize(("phrase", "language"), [("близ милана", "en"), ("vector search", "en"), ("москве", "")])
def test_a_phrase_outside_russian_stays_as_written(phrase, language):
    assert nominative_phrase(phrase.split(), language) == phrase.split()


def test_two_cases_of_one_word_share_a_lemma():
    assert lemma("учеников", "ru") == lemma("ученик", "ru") == "ученик"
    assert lemma("квирклзорпа", "ru") == "квирклзорпа"
    assert lemma("students", "en") == "students"
