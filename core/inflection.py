"""Names in a language that declines them, read in the nominative: "в Мюнхене" and "из Мюнхена"
both name Мюнхен, "Альберта Эйнштейна" is Альберт Эйнштейн, so every case of one name is one
entity. pymorphy3 with its Russian dictionary (OpenCorpora; MIT code, CC BY-SA data, all in the
wheels, about 16 MB memory-mapped), loaded only by a process that reads Russian. The dictionary also
marks the names of places (its Geox tag), which one word's shape cannot tell apart from a person's.
"""

from __future__ import annotations

from functools import lru_cache

# Languages whose names are read in the nominative. Ukrainian's pymorphy3 dictionary is GPL-3.0,
# so it is not a dependency.
DECLINED = frozenset({"ru"})
_DECLINED_POS = frozenset({"NOUN", "ADJF"})


@lru_cache(maxsize=2)
def _analyzer(language: str):
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang=language)


@lru_cache(maxsize=20_000)
def _parse(language: str, word: str):
    """The dictionary's likeliest reading of one word (its lower-case form)."""
    return _analyzer(language).parse(word.lower())[0]


def nominative(name: str, language: str) -> str:
    """The name with each capitalised word in the nominative, keeping its number and gender
    ("Московской области" is "Московская область"); acronyms, words in lower case and names in a
    language that is not declined stay as written."""
    if language not in DECLINED:
        return name
    words = []
    for word in name.split(" "):
        if word[:1].isupper() and not word.isupper():
            parse = _parse(language, word)
            if parse.tag.POS in _DECLINED_POS and parse.tag.case not in (None, "nomn"):
                form = parse.inflect({"nomn"})
                if form is not None:
                    word = form.word[:1].upper() + form.word[1:]
        words.append(word)
    return " ".join(words)


def names_a_place(word: str, language: str) -> bool:
    """Whether the dictionary's likeliest reading of one word is a place's name (Кострома, Цюрихе)."""
    return language in DECLINED and not word.isupper() and "Geox" in _parse(language, word).tag


def is_adjective(word: str, language: str) -> bool:
    """Whether the dictionary's likeliest reading of one word is an adjective ("Высшее", "Московской"),
    which names nothing alone."""
    return language in DECLINED and not word.isupper() and _parse(language, word).tag.POS in ("ADJF", "ADJS")
