"""Extractive summaries: the most central sentences of a text (TextRank over TF-IDF), local and fast.

A summary is at most three sentences and 500 characters, in the order they appear; the preview is
one line of at most 160 characters. Only the first SOURCE_CHARS characters are read, so a huge
memory costs no more than a long one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

from memories.auto_tags import stopwords
from memories.parsers.mail import without_mail_header

MAX_SUMMARY_CHARS = 500
MAX_SENTENCES = 3
MAX_PREVIEW_CHARS = 160
SOURCE_CHARS = 20_000
MAX_CANDIDATES = 120

# Paragraphs and list items are unambiguous breaks; within one, a stop followed by a space may end
# a sentence or not ("Dr. Patel", "9.30 a.m. at", "J. R. R. Tolkien"). Where the word before the stop
# could be an abbreviation or an initial, or the next word starts in lower case or with a digit,
# pySBD (a maintained rule-based segmenter: abbreviations, initials, decimals, ellipses) decides.
# Running it only there keeps the cost of a plain split: pySBD alone is some 30 ms a page.
_BLOCK = re.compile(r"\n\s*\n|\n(?=\s*[-*•#\d])")
_CANDIDATE_END = re.compile(r"(?<=[.!?。！？])\s+")
_MAYBE_ABBREVIATION = re.compile(r"(?:^|\s)(?:\S*\.\S+\.|[A-Za-z]\.|[A-Z][a-z]{0,3}\.|[a-z]{1,4}\.|\d+\.)$")
_WORD = re.compile(r"[^\W_]{2,}")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def _ambiguous(before: str, after: str) -> bool:
    return bool(_MAYBE_ABBREVIATION.search(before)) or after[:1].islower() or after[:1].isdigit()


def _sentences_of(block: str) -> list[str]:
    pieces = _CANDIDATE_END.split(block)
    runs: list[list[str]] = [[pieces[0]]]
    for piece in pieces[1:]:
        if _ambiguous(runs[-1][-1], piece):
            runs[-1].append(piece)
        else:
            runs.append([piece])
    sentences: list[str] = []
    for run in runs:
        if len(run) == 1:
            sentences.append(run[0])
        else:
            sentences.extend(_segmenter().segment(" ".join(run)))
    return sentences


# What a sentence of prose ends with, in the scripts read here.
# A footnote's mark opening a sentence ("*** Check the GST statement", "† Usage and recurring
# charges", "[2] See"): small print, not what a document is about.
_FOOTNOTE = re.compile(r"(?:[*†‡§¹²³⁴⁵⁶⁷⁸⁹]+|\[\d+\])\s")
_SENTENCE_END = re.compile(r"[.!?。！？…]['\"’”»)]*$")
_LETTERS = re.compile(r"[^\W\d_]+")
PROSE_MIN_WORDS = 5
PROSE_MIN_LOWER_SHARE = 0.4
PROSE_MIN_LETTER_SHARE = 0.6


def split_sentences(text: str) -> list[str]:
    return [sentence for sentence, _ in _sentences(text)]


def _sentences(text: str) -> list[tuple[str, bool]]:
    """Each sentence, and whether its block is laid out as prose (not layout_block)."""
    text = _CONTROL.sub(" ", text[:SOURCE_CHARS])
    sentences = []
    for block in _BLOCK.split(text):
        if not block.strip():
            continue
        running = not layout_block(block)
        for part in _sentences_of(" ".join(block.split())):
            sentence = " ".join(part.split())
            if len(sentence) >= 3:
                sentences.append((sentence, running))
    return sentences


# A block of this many lines or more, most of them short and few ending as a sentence does, is laid
# out (a figure's labels, a list, a table, an address), however its words read once joined.
LAYOUT_MIN_LINES = 3
LAYOUT_SHORT_LINE = 40


def layout_block(block: str) -> bool:
    """Whether a block of text is laid out in short lines rather than written as running text."""
    lines = [line.strip() for line in block.split("\n") if line.strip()]
    if len(lines) < LAYOUT_MIN_LINES:
        return False
    short = sum(len(line) < LAYOUT_SHORT_LINE for line in lines)
    ended = sum(bool(_SENTENCE_END.search(line)) for line in lines)
    return short * 10 >= 6 * len(lines) and ended * 10 <= 3 * len(lines)


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


def _rank(sentences: list[str]) -> list[float]:
    stop = stopwords()
    bags = [Counter(w for w in _WORD.findall(s.lower()) if w not in stop) for s in sentences]
    df = Counter(w for bag in bags for w in bag)
    n = len(sentences)
    vectors = []
    for bag in bags:
        vec = {w: c * math.log(1 + n / df[w]) for w, c in bag.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        vectors.append({w: v / norm for w, v in vec.items()})
    weights = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            a, b = vectors[i], vectors[j]
            if len(a) > len(b):
                a, b = b, a
            sim = sum(v * b.get(w, 0.0) for w, v in a.items())
            weights[i][j] = weights[j][i] = sim
    totals = [sum(row) or 1.0 for row in weights]
    scores = [1.0 / n] * n
    for _ in range(30):  # PageRank with the usual damping; converges well within 30 rounds here
        scores = [0.15 / n + 0.85 * sum(weights[j][i] / totals[j] * scores[j] for j in range(n)) for i in range(n)]
    # A slight lead for early sentences: openings tend to state what a text is about.
    return [score * (1.0 + 0.3 / (1 + position)) for position, score in enumerate(scores)]


def is_prose_sentence(sentence: str) -> bool:
    """Whether a sentence is prose, not a heading, a table's row, a form's labels, a figure's or a
    footnote ("Artikel Aantal Prijs per stuk BTW", "TRANSITION REPORT PURSUANT TO SECTION 13", "## Slide
    1", "*** Check the GST statement attached"):
    it ends as a sentence does, most of its characters are letters, and in a script with capitals at
    least PROSE_MIN_LOWER_SHARE of its words are written in lower case (German's nouns leave enough)."""
    if sentence.startswith("#") or _FOOTNOTE.match(sentence) or not _SENTENCE_END.search(sentence):
        return False
    visible = sum(not ch.isspace() for ch in sentence)
    words = _LETTERS.findall(sentence)
    if sum(len(w) for w in words) < PROSE_MIN_LETTER_SHARE * visible:
        return False
    cased = [w for w in words if w.lower() != w.upper()]
    if not cased:
        return True  # a script without capitals (Japanese, Chinese): its end says enough
    if len(words) < PROSE_MIN_WORDS:
        return False
    return sum(w.islower() for w in cased) >= PROSE_MIN_LOWER_SHARE * len(cased)


# The heading of a document's own summary (a paper's abstract), in the languages documents here are
# mostly in, on a line of its own or opening its first line ("Abstract—We present", "Résumé. Une").
_ABSTRACT = re.compile(
    r"^[ \t]*(?:abstract|summary|executive summary|résumé|zusammenfassung|kurzfassung|resumen|riassunto|"
    r"samenvatting|sammanfattning|аннотация|реферат)[ \t]*(?:[.:—–][ \t]*|-[ \t]+|\n)",
    re.IGNORECASE | re.MULTILINE,
)
# What ends an abstract: a blank line after a paragraph of it, or the next heading (keywords, the
# introduction, a numbered first section, ACM's categories).
_ABSTRACT_END = re.compile(
    r"\n[ \t]*\n(?=[ \t]*\S)|^[ \t]*(?:(?:\d+|[ivx]+)\.?[ \t]+)?(?:introduction|keywords?|key words|index terms|"
    r"categories and subject descriptors|mots[- ]clés|schlüsselwörter|einleitung|einführung|palabras clave|"
    r"introducción|introduzione|parole chiave|inleiding|trefwoorden|введение|ключевые слова)\b",
    re.IGNORECASE | re.MULTILINE,
)
# An abstract opens a document: it is looked for in this much of its text.
ABSTRACT_WITHIN = 6000
ABSTRACT_MIN_SENTENCES = 2


def abstract_of(text: str) -> list[str]:
    """The prose sentences of the document's own summary (an "Abstract" heading in its opening), or []
    when it has none: the author's summary says what a paper is about better than any ranking of its
    sentences (TraceMonkey's had been a sentence from section 4)."""
    found = _ABSTRACT.search(text[:ABSTRACT_WITHIN])
    if found is None:
        return []
    rest = text[found.end() : found.end() + ABSTRACT_WITHIN]
    end = _ABSTRACT_END.search(rest, 1)
    sentences = [sentence for sentence, _ in _sentences(rest[: end.start() if end else len(rest)])]
    prose = [sentence for sentence in sentences if is_prose_sentence(sentence)]
    return prose if len(prose) >= ABSTRACT_MIN_SENTENCES else []


def _opening(sentences: list[str]) -> list[str]:
    """The first sentences that fit a summary, in order (at least the first)."""
    chosen: list[str] = []
    used = 0
    for sentence in sentences[:MAX_SENTENCES]:
        length = len(sentence) + (1 if chosen else 0)
        if chosen and used + length > MAX_SUMMARY_CHARS:
            break
        chosen.append(sentence)
        used += length
    return chosen


def _once_each(read: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The sentences without repeats (a questionnaire's items, a page's running header), first kept."""
    seen: set[str] = set()
    kept = []
    for sentence, running in read:
        key = " ".join(sentence.lower().split())
        if key not in seen:
            seen.add(key)
            kept.append((sentence, running))
    return kept


def summarize(text: str) -> tuple[str, str]:
    """(summary, preview) of a text; both empty when it has no sentence. A document with an abstract
    is summed up by its abstract's opening sentences. Of another text with more sentences than a
    summary holds, the summary is chosen among its prose (running text that is_prose_sentence
    accepts) when it has some, so a document's letterhead, a table's header or a figure's labels are
    not what it is said to be about, and no sentence twice; a mail is read without its header lines."""
    text = without_mail_header(text)
    abstract = abstract_of(text)
    if abstract:
        chosen = _opening(abstract)
        return _shorten(" ".join(chosen), MAX_SUMMARY_CHARS), _shorten(chosen[0], MAX_PREVIEW_CHARS)
    read = _sentences(text)
    if not read:
        return "", ""
    read = _once_each(read)
    sentences = [sentence for sentence, _ in read]
    written = [sentence for sentence, running in read if running and is_prose_sentence(sentence)]
    if written and len(sentences) > MAX_SENTENCES:
        sentences = written
    if len(sentences) <= MAX_SENTENCES and sum(len(s) + 1 for s in sentences) <= MAX_SUMMARY_CHARS:
        chosen = sentences
    else:
        candidates = sentences[:MAX_CANDIDATES]
        scores = _rank(candidates)
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        picked: list[int] = []
        used = 0
        for i in order:
            length = min(len(candidates[i]), MAX_SUMMARY_CHARS) + (1 if picked else 0)
            if used + length > MAX_SUMMARY_CHARS:
                continue
            picked.append(i)
            used += length
            if len(picked) == MAX_SENTENCES:
                break
        if not picked:  # even the best sentence is too long: keep its opening
            picked = [order[0]]
        chosen = [candidates[i] for i in sorted(picked)]
    summary = _shorten(" ".join(chosen), MAX_SUMMARY_CHARS)
    return summary, _shorten(chosen[0], MAX_PREVIEW_CHARS)
