"""Rules that need a whole document, not one chunk: its running headers and footers (lines it repeats
page after page, which are layout rather than content), and the bounded number of entities one
document keeps. Pure: chunk texts and mentions in, masked texts and kept keys out."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from graph.vocabulary import CONCEPT

# A document is read for running lines only when it has this many chunks: a short text has no pages.
RUNNING_MIN_CHUNKS = 3
# A running line is at most this long; body text that repeats (a quoted refrain) is longer.
RUNNING_MAX_CHARS = 100

_DIGITS = re.compile(r"\d+")


# Lines of at most this many words compare with their numbers as placeholders (a page number);
# longer ones must repeat word for word, as body text that differs in a figure is still content.
RUNNING_NUMBERED_WORDS = 8


def _line_key(line: str) -> str | None:
    """The line as compared with the others: whitespace collapsed and, in a short line, every number one
    placeholder, so "Page 3 of 40" and "Page 4 of 40" are the same footer. None for a line too short or
    long to be one, or with no letter in it."""
    text = " ".join(line.split())
    if not 3 <= len(text) <= RUNNING_MAX_CHARS or not any(ch.isalpha() for ch in text):
        return None
    text = text.casefold()
    return _DIGITS.sub("#", text) if text.count(" ") < RUNNING_NUMBERED_WORDS else text


def running_lines(chunks: Sequence[str]) -> frozenset[str]:
    """The lines a document repeats at page-like intervals, as `_line_key` keys.

    A line counts when it appears in at least RUNNING_MIN_CHUNKS chunks and in at least a sixth of
    them (a header on every page of pages several chunks long), yet at most twice in any one chunk: a
    header comes back once a page, while a speaker's label in a transcript or a value repeated down a
    table comes back line after line, and those are content.
    """
    if len(chunks) < RUNNING_MIN_CHUNKS:
        return frozenset()
    in_chunks: Counter[str] = Counter()
    crowded: set[str] = set()
    for text in chunks:
        counts = Counter(key for line in text.split("\n") if (key := _line_key(line)) is not None)
        in_chunks.update(counts.keys())
        crowded.update(key for key, n in counts.items() if n > 2)
    needed = max(RUNNING_MIN_CHUNKS, len(chunks) / 6)
    return frozenset(key for key, n in in_chunks.items() if n >= needed and key not in crowded)


def mask_lines(text: str, keys: frozenset[str]) -> str:
    """The text with its running lines blanked to spaces, so every other character keeps its offset."""
    if not keys:
        return text
    lines = text.split("\n")
    return "\n".join(" " * len(line) if _line_key(line) in keys else line for line in lines)


def mask_running_lines(chunks: Sequence[str]) -> list[str]:
    """A document's chunk texts with the lines it repeats page after page blanked (see running_lines)."""
    keys = running_lines(chunks)
    return [mask_lines(text, keys) for text in chunks] if keys else list(chunks)


# --- A bounded number of entities per document --------------------------------------------------

# What one document keeps at most: a long report names hundreds of things once each (every city of a
# table, every author of a reference list), and a graph of all of them is noise.
MAX_ENTITIES_PER_DOCUMENT = 40
# Mentions in one document past which more mentions do not make a name more salient.
SALIENT_MENTIONS = 3


def salient_keys(
    mentions: Iterable[tuple[str, str]], *, known: set[str], limit: int = MAX_ENTITIES_PER_DOCUMENT
) -> set[str]:
    """The keys one document keeps, from its mentions as (key, type) in text order: every key when
    there are at most `limit`, else the `limit` most salient. Names the account already knows from
    other memories come first (they are what connects this document to the rest), then the names the
    document mentions most (up to SALIENT_MENTIONS: past that, a name is simply a subject of the
    document), then names over plain concepts, then the earlier ones (a paper's title page names its
    authors before its references do)."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    named: dict[str, bool] = {}
    for index, (key, entity_type) in enumerate(mentions):
        counts[key] += 1
        first.setdefault(key, index)
        named[key] = named.get(key, False) or entity_type != CONCEPT
    if len(counts) <= limit:
        return set(counts)
    ranked = sorted(
        counts,
        key=lambda key: (key not in known, -min(counts[key], SALIENT_MENTIONS), not named[key], first[key]),
    )
    return set(ranked[:limit])
