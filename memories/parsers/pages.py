"""Page accounting for paged formats (PDF, images): what each page gave (its text layer, OCR, nothing),
whether a text layer is text at all, and the notices that say which pages were read how or lost."""

from __future__ import annotations

import re
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
