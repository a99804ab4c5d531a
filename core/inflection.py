"""Words in a language that declines them, read in the nominative: "в Мюнхене" and "из Мюнхена"
both name Мюнхен, "Альберта Эйнштейна" is Альберт Эйнштейн, so every case of one name is one
entity, and the keyword tag of "близ Милана" is милан. pymorphy3 with its Russian dictionary
(OpenCorpora; MIT code, CC BY-SA data, all in the wheels, about 16 MB memory-mapped), loaded only by
a process that reads Russian. The dictionary also marks the names of places (its Geox tag), which
one word's shape cannot tell apart from a person's.
"""

from __future__ import annotations

from collections.abc import Sequence
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
def _parses(language: str, word: str) -> tuple:
    """Every reading the dictionary gives one word (its lower-case form), likeliest first; none
    for a word it does not know, whose readings are only guesses from its ending."""
    analyzer = _analyzer(language)
    word = word.lower()
    return tuple(analyzer.parse(word)) if analyzer.word_is_known(word) else ()


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


_AGREEING_POS = frozenset({"ADJF", "PRTF"})
_PERSON_NAME = frozenset({"Name", "Surn", "Patr"})
_GENDERS = frozenset({"masc", "femn", "neut"})


def nominative_phrase(words: Sequence[str], language: str) -> list[str]:
    """A keyword phrase (lower-case words) as one names a thing: its head noun (the first noun) in
    the nominative singular, or plural for a word only used in the plural ("ножницы"); adjectives
    before it agreeing with it ("центрального федерального округа" is "центральный федеральный
    округ"); a name's further parts in the nominative too ("альберта эйнштейна" is "альберт
    эйнштейн"); a complement after the head as written ("версия издания"); a preposition at the start
    dropped ("близ милана" is "милан"). Without a noun, adjectives go to the nominative keeping number
    and gender. Words the dictionary does not know, and phrases in a language that is not declined,
    stay as written."""
    if language not in DECLINED:
        return list(words)
    words = list(words)
    while len(words) > 1 and any(p.tag.POS == "PREP" for p in _parses(language, words[0])[:1]):
        words.pop(0)
    readings = [_parses(language, word) for word in words]
    head = next((i for i, parses in enumerate(readings) if not parses or parses[0].tag.POS == "NOUN"), None)
    # A phrase that is no noun phrase ("пережить новогоднюю", a verb and its object) and one whose
    # head the dictionary does not know stay as written.
    if any(not parses or parses[0].tag.POS not in _AGREEING_POS for parses in readings[:head]):
        return words
    if head is None:
        return [_alone(parses, word) for word, parses in zip(words, readings, strict=True)]
    if not readings[head]:
        return words
    noun = readings[head][0]
    number = "plur" if "Pltm" in noun.tag else "sing"
    target = {"nomn", number}
    agreement = target | ({noun.tag.gender} if number == "sing" and noun.tag.gender in _GENDERS else set())
    out = list(words)
    out[head] = _inflected(noun, target, words[head])
    for i in range(head):
        out[i] = _inflected(_agreeing(readings[i], noun), agreement, words[i])
    if _PERSON_NAME & noun.tag.grammemes:
        # "альберта эйнштейна": the name's later parts stand in the first one's case.
        for i in range(head + 1, len(words)):
            part = next(
                (p for p in readings[i] if _PERSON_NAME & p.tag.grammemes and p.tag.case == noun.tag.case), None
            )
            if part is None:
                break
            out[i] = _inflected(part, target, words[i])
    return out


def _agreeing(parses: tuple, noun):
    """The reading of an adjective before the head noun in the noun's case and number, else its
    likeliest."""
    adjectives = [p for p in parses if p.tag.POS in _AGREEING_POS]
    same = [p for p in adjectives if p.tag.case == noun.tag.case and p.tag.number == noun.tag.number]
    return (same or adjectives)[0]


def _alone(parses: tuple, word: str) -> str:
    """An adjective without its noun in the nominative, its number kept; of the genders its ending
    allows ("центрального" is masculine or neuter) the masculine, the dictionary's own form."""
    best = parses[0]
    same = [
        p
        for p in parses
        if p.tag.POS in _AGREEING_POS and p.tag.case == best.tag.case and p.tag.number == best.tag.number
    ]
    reading = next((p for p in same if p.tag.gender == "masc"), best)
    return _inflected(reading, {"nomn"}, word)


def _inflected(parse, grammemes: set[str], word: str) -> str:
    """The reading put into the grammemes (else into the nominative alone, keeping the rest); the
    word as written when the dictionary has no such form."""
    for wanted in (grammemes, {"nomn"}):
        form = parse.inflect(wanted)
        if form is None:
            continue
        # A lexeme may hold several forms with one tag ("высший" and "высочайший" both make the
        # superlative of высокий): the one closest to the word as written is the word's own.
        same = [form, *(f for f in parse.lexeme if f.tag == form.tag)]
        return max(same, key=lambda f: _shared_prefix(f.word, word)).word
    return word


def _shared_prefix(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def lemma(word: str, language: str) -> str:
    """A word's dictionary form ("учеников" is ученик), so two cases of it count as one word; a word
    the dictionary does not know, or in a language that is not declined, as written."""
    if language not in DECLINED:
        return word
    parses = _parses(language, word)
    return parses[0].normal_form if parses else word.lower()
