"""Names in Japanese text, by the parts of speech of a Japanese dictionary (SudachiPy with
SudachiDict's small edition, both Apache-2.0, the dictionary in its wheel and memory-mapped).

Japanese has no capitals and no spaces, so the language-neutral rules (graph.extraction.neutral)
cannot tell a name from a word there. The dictionary can: it knows proper nouns from common ones,
and which proper nouns are people, given and family names, and places.

- A person: a family name and a given name (山口百恵), a name the dictionary knows whole (琴欧州), a
  name before an honorific (丸山さん), or a foreign name written in katakana parts joined by "・"
  when one part is a known name (ダニエル・ピンク).
- A place: a proper noun of place (イギリス, 東京).
- A title in 『』 is a work, and a name in 「」 a product or service (see _quoted_names).
- Another proper noun (インテル, グーグル) is a concept whose own words may type it further.
- A katakana word the dictionary does not know (エルエル), when it recurs in the text, is a term. A
  katakana word it knows as a common noun (アプリ, セキュリティ, フリーランス) is only a word, like
  "app" or "security" in English, and so is a compound of such words (アクセスポイント): the
  dictionary cannot tell a company named by common words (トレンドマイクロ) from them, so such a
  company is missed rather than every compound kept.

Latin-script names inside Japanese text are left to the neutral rules (several capitalised words)."""

from __future__ import annotations

import functools
import logging
import re
from typing import NamedTuple

from graph.extraction.keys import canonical_key, is_meaningful
from graph.extraction.typing import type_for_name
from graph.vocabulary import CONCEPT, LOCATION, PERSON, PRODUCT, WORK

logger = logging.getLogger(__name__)

_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]+")
_KATAKANA_TERM = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")
_HONORIFICS = frozenset("さん 氏 様 さま 君 くん ちゃん 先生 殿".split())
_JOINER = "・"
# A name quoted in 「」 or 『』: at most 30 characters, on one line, without sentence punctuation.
_QUOTED = re.compile(r"([「『])([^「」『』。、！？!?\n]{2,30})[」』]")
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
_KATAKANA_OR_LATIN = re.compile(r"[\u30a1-\u30fa\u30fcA-Za-z]")
# The dictionary reads at most 49,149 bytes at once; a character takes at most four in UTF-8.
PIECE_CHARS = 12_000


@functools.cache
def _dictionary():
    from sudachipy import Dictionary

    return Dictionary(dict="small")


@functools.cache
def _tokenizer():
    from sudachipy import SplitMode

    return _dictionary().tokenizer(mode=SplitMode.C)


@functools.lru_cache(maxsize=4096)
def _only_a_name(surface: str) -> bool:
    """Whether every reading the dictionary has of the word is a person's name: "テレサ" is, "クマ"
    (also "bear") and "丸山" (also a place) are not."""
    return all(m.part_of_speech()[2] == "人名" for m in _dictionary().lookup(surface))


class _Morpheme(NamedTuple):
    """One morpheme: its text, where it is, its part of speech (four levels) and whether the
    dictionary lacks it."""

    surface: str
    start: int
    end: int
    pos: tuple
    oov: bool

    @property
    def proper(self) -> bool:
        return self.pos[0] == "名詞" and self.pos[1] == "固有名詞"

    @property
    def katakana(self) -> bool:
        return bool(_KATAKANA.fullmatch(self.surface))

    def name_part(self, part: str) -> bool:
        return self.proper and self.pos[2] == "人名" and self.pos[3] == part


def morphemes(text: str) -> list[_Morpheme]:
    """The text's morphemes with their offsets, read in pieces the dictionary accepts (it refuses more
    than 48 KiB at once); none when the dictionary cannot be loaded."""
    try:
        tokenizer = _tokenizer()
    except (ImportError, OSError, RuntimeError, ValueError) as exc:  # a broken install reads no Japanese
        logger.warning("Japanese morphology unavailable (%s: %s)", type(exc).__name__, exc)
        return []
    found: list[_Morpheme] = []
    for offset, piece in _pieces(text):
        found += [
            _Morpheme(m.surface(), offset + m.begin(), offset + m.end(), tuple(m.part_of_speech()[:4]), m.is_oov())
            for m in tokenizer.tokenize(piece)
        ]
    return found


def _pieces(text: str) -> list[tuple[int, str]]:
    """(offset, piece) of at most PIECE_CHARS characters (4 bytes each at most), cut after a line."""
    pieces, start = [], 0
    while start < len(text):
        end = min(len(text), start + PIECE_CHARS)
        if end < len(text) and (cut := text.rfind("\n", start, end)) > start:
            end = cut + 1
        pieces.append((start, text[start:end]))
        start = end
    return pieces


def japanese_names(text: str) -> list[tuple[str, str, str, int, int]]:
    """(key, name, type, start, end) of the names in a Japanese text, in text order."""
    tokens = morphemes(text)
    found = _quoted_names(text, tokens)
    taken = [(start, end) for _, _, start, end in found]
    i = 0
    while i < len(tokens):
        span = _person(tokens, i) or _proper(tokens, i)
        if span is None:
            i += 1
            continue
        kind, last = span
        start, end = tokens[i].start, tokens[last].end
        if not any(s < end and start < e for s, e in taken):
            found.append((text[start:end], kind, start, end))
        i = last + 1
    taken = [(start, end) for _, _, start, end in found]
    found += _katakana_terms(text, tokens, taken)
    typed = []
    for name, kind, start, end in sorted(found, key=lambda item: item[2]):
        if (settled := _typed(name, kind)) is not None:
            typed.append((settled[0], name, settled[1], start, end))
    return typed


def _quoted_names(text: str, tokens: list[_Morpheme]) -> list[tuple[str, str, int, int]]:
    """Names in 『』 (titles of works) and short names in 「」 that hold katakana or Latin letters
    (products and services: 「ウイルスバスター モバイル」). 「」 also quotes speech and words, so a
    quotation with hiragana (the particles of a sentence), of more than 20 characters, or that is
    one word the dictionary knows as a common noun, is none."""
    single = {(t.start, t.end) for t in tokens if not t.proper and not t.oov}
    found = []
    for match in _QUOTED.finditer(text):
        name = match.group(2)
        start, end = match.start(2), match.end(2)
        if name != name.strip() or (start, end) in single:
            continue
        if match.group(1) == "「" and (not _KATAKANA_OR_LATIN.search(name) or _HIRAGANA.search(name) or len(name) > 20):
            continue
        found.append((name, PRODUCT if match.group(1) == "「" else WORK, start, end))
    return found


def _person(tokens: list[_Morpheme], i: int) -> tuple[str, int] | None:
    token = tokens[i]
    if not (token.proper and token.pos[2] == "人名") or token.surface.isascii():
        return None
    if token.katakana:  # ダニエル・ピンク: katakana parts joined by "・"
        last = i
        while last + 2 < len(tokens) and tokens[last + 1].surface == _JOINER and tokens[last + 2].katakana:
            last += 2
        if last > i:
            return PERSON, last
    if token.name_part("姓") and i + 1 < len(tokens) and tokens[i + 1].name_part("名"):
        return PERSON, i + 1
    if i + 1 < len(tokens) and tokens[i + 1].surface in _HONORIFICS:
        return PERSON, i
    # A name alone: only one the dictionary knows as nothing else ("テレサ", not "クマ" or "丸山").
    if len(token.surface) >= 2 and _only_a_name(token.surface):
        return PERSON, i
    return None


def _proper(tokens: list[_Morpheme], i: int) -> tuple[str, int] | None:
    token = tokens[i]
    if not token.proper or token.pos[2] == "人名" or len(token.surface) < 2 or token.surface.isascii():
        return None
    if token.pos[2] == "地名":
        return LOCATION, i
    return CONCEPT, i


def _katakana_terms(text: str, tokens: list[_Morpheme], taken: list[tuple[int, int]]) -> list:
    """Katakana words the dictionary does not know that recur in the text (see the module docstring)."""
    unknown = [
        t
        for t in tokens
        if t.oov
        and _KATAKANA_TERM.fullmatch(t.surface)
        and t.surface.strip("ー")
        and not any(start < t.end and t.start < end for start, end in taken)
    ]
    counts: dict[str, int] = {}
    for token in unknown:
        counts[token.surface] = counts.get(token.surface, 0) + 1
    return [(t.surface, CONCEPT, t.start, t.end) for t in unknown if counts[t.surface] > 1]


def _typed(name: str, kind: str) -> tuple[str, str] | None:
    """The key and type of a found name, the type settled by what the rules know of the name (a
    gazetteer of organisations, for example); None for a name that means nothing."""
    key = canonical_key(name, kind)
    if not is_meaningful(name, key):
        return None
    if kind == CONCEPT:
        kind = type_for_name(name, key, CONCEPT) or CONCEPT
        key = canonical_key(name, kind)
    return key, kind
