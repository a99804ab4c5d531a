"""Page accounting for paged formats (PDF, images): what each page gave (its text layer, OCR, nothing),
whether a text layer is text at all, and the notices that say which pages were read how or lost."""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass

# Why a page has no usable text layer, in a notice's words.
REASONS = {
    "no-text-layer": "no text layer",
    "drawing": "no text layer",
    "undecodable": "text could not be decoded",
    "scanned": "scanned pages",
    "image": "an image",
}
# A text layer is unusable when more than this share of its visible characters is garbage, or when
# too few of them are letters or digits (a font's raw codes read as punctuation).
MAX_GARBAGE_SHARE = 0.3
MIN_ALNUM_SHARE = 0.4

# Glyph names written out as text (/g145/g144, /uni0041), (cid:NN) runs and PDFium's raw char codes.
_GARBAGE = re.compile(r"(?:/[A-Za-z]{1,8}\d{1,6}(?=/|\s|$))+|(?:\(cid:\d+\)\s*)+")


@dataclass
class PageText:
    """One page: its text and its state (kept in Extracted.metadata["pages"] by page_metadata).

    state: "text" (its own text layer), "pending" (no usable text yet: waits for OCR), "ocr" (read by
    OCR), "blank" (nothing drawn on it) or "dropped" (not read; `why` says why). `reason` says why a
    page went to OCR (a key of REASONS; "drawing": lines and shapes only, blank when OCR finds no text); `layer` keeps an unusable text layer, the fallback when OCR
    finds less."""

    number: int
    text: str
    state: str
    reason: str = ""
    why: str = ""
    layer: str = ""
    garbled: int = 0  # lines of glyph codes left out of a text layer (garbled_line)

    def as_metadata(self) -> dict:
        entry: dict = {"text": "layer" if self.state == "text" else self.state}
        if self.reason:
            entry["reason"] = REASONS.get(self.reason, self.reason)
        if self.why:
            entry["why"] = self.why
        return entry


def text_is_usable(text: str) -> bool:
    """Whether a text layer is text: not glyph names, (cid:NN) runs, control characters, private-use
    or replacement characters where the font had no usable encoding."""
    visible = sum(not ch.isspace() for ch in text)
    if not visible:
        return False
    garbage = sum(len(m.group().replace(" ", "")) for m in _GARBAGE.finditer(text))
    alnum = 0
    for ch in _GARBAGE.sub(" ", text):
        if ch.isspace():
            continue
        category = unicodedata.category(ch)
        if category in ("Cc", "Co", "Cs", "Cn") or ch in "\ufffd\ufffe":
            garbage += 1
        elif ch.isalnum():
            alnum += 1
    if garbage / visible > MAX_GARBAGE_SHARE:
        return False
    return visible < 20 or alnum / visible >= MIN_ALNUM_SHARE


# A line of a text layer whose characters are glyph codes in a font without a usable encoding, as
# charts' labels often are ("<//2??.1@A<9=.>922?#3!4,56#"): no word in it, a third of it or more
# symbols of three kinds or more, in tokens of four characters or more on average (a formula such as
# "x^2 + y^2" has shorter ones).
GARBLED_MIN_CHARS = 8
GARBLED_SYMBOL_SHARE = 0.3
GARBLED_MIN_TOKEN = 4
GARBLED_MIN_KINDS = 3  # kinds of symbol: "[17][18]", "2010b)).", "FR76 *****" are text
_ASCII_SYMBOLS = frozenset(string.punctuation)
_WORDLIKE = re.compile(r"[A-Za-z]*[AEIOUYaeiouy][A-Za-z]*|[^\W\d_A-Za-z]{2,}")


def garbled_line(line: str) -> bool:
    """Whether a line of a text layer is glyph codes, not text (see GARBLED_MIN_CHARS)."""
    tokens = line.split()
    visible = sum(len(token) for token in tokens)
    if visible < GARBLED_MIN_CHARS or visible < GARBLED_MIN_TOKEN * len(tokens):
        return False
    # ASCII punctuation and control characters: a line of emoji or of other scripts' signs is text.
    symbols = [ch for token in tokens for ch in token if ch in _ASCII_SYMBOLS or unicodedata.category(ch)[0] == "C"]
    if len(symbols) < GARBLED_SYMBOL_SHARE * visible or len(set(symbols)) < GARBLED_MIN_KINDS:
        return False
    return not any(len(match.group()) >= 3 or not match.group().isascii() for match in _WORDLIKE.finditer(line))


def without_garbled_lines(text: str) -> tuple[str, int]:
    """The text without its garbled lines (garbled_line), and how many there were."""
    lines = text.split("\n")
    kept = [line for line in lines if not garbled_line(line)]
    return ("\n".join(kept), len(lines) - len(kept)) if len(kept) < len(lines) else (text, 0)


def page_range(numbers: list[int]) -> str:
    """ "page 4", "pages 1–3", "pages 1–3, 7"."""
    spans: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], n)
        else:
            spans.append((n, n))
    text = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in spans)
    return ("page " if len(numbers) == 1 else "pages ") + text


def page_notices(pages: list[PageText], *, what: str) -> list[str]:
    """One notice per kind of loss or OCR, naming its pages: "pages 1–3: no text layer, read by OCR".
    A single image says "the image" instead of "page 1"."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for page in pages:
        if page.state in ("ocr", "dropped"):
            groups.setdefault((page.state, page.reason, page.why), []).append(page.number)
    notices = []
    single = len(pages) == 1 and what == "image"
    for (state, reason, why), numbers in groups.items():
        where = "the image" if single else page_range(numbers)
        cause = "" if single else REASONS.get(reason, reason)
        if state == "ocr":
            notices.append(f"{where}: {cause + ', ' if cause else ''}read by OCR")
        else:
            notices.append(f"{where}: {cause + ', ' if cause else ''}not read: {why}")
    garbled = [page for page in pages if page.garbled]
    if garbled:
        lines = sum(page.garbled for page in garbled)
        notices.append(
            f"{page_range([page.number for page in garbled])}: {lines} line{'s' if lines > 1 else ''} of "
            "unreadable characters left out (a font without a usable encoding, often a chart's labels)"
        )
    return notices


def page_metadata(pages: list[PageText]) -> list[dict]:
    """Each run of pages that gave the same: [{"first": 1, "last": 3, "text": "ocr", "reason": "no text
    layer"}, {"first": 4, "last": 9, "text": "layer"}]. Runs keep a long document's metadata small."""
    runs: list[dict] = []
    for page in pages:
        entry = page.as_metadata()
        last = runs[-1] if runs else None
        if (
            last
            and last["last"] == page.number - 1
            and {k: v for k, v in last.items() if k not in ("first", "last")} == entry
        ):
            last["last"] = page.number
        else:
            runs.append({"first": page.number, "last": page.number, **entry})
    return runs
