"""Snippets: the window of a chunk's text that best shows the query's terms, plain and marked up."""

from __future__ import annotations

import html

from memories.search.scoring import term_matcher


def make_snippet(text: str, terms: list[str], *, width: int = 240) -> tuple[str, str]:
    """A window of the text around the densest run of query terms, as plain text and as HTML with <mark>."""
    text = " ".join(text.split())
    matcher = term_matcher(terms)
    matches = matcher.spans(text) if matcher else []
    if matches:
        starts = [begin for begin, _ in matches]
        best_start, best_count, j = starts[0], 0, 0
        for i, begin in enumerate(starts):  # densest window of matches, two pointers
            while j < len(starts) and starts[j] < begin + width:
                j += 1
            if j - i > best_count:
                best_start, best_count = begin, j - i
        start = max(0, best_start - width // 4)
    else:
        start = 0
    end = min(len(text), start + width)
    if start > 0:
        start = text.find(" ", start) + 1 or start
    if end < len(text):
        end = text.rfind(" ", start, end) if text.rfind(" ", start, end) > start else end
    window = text[start:end]
    prefix, suffix = ("…" if start > 0 else ""), ("…" if end < len(text) else "")
    pieces, last = [], 0
    for begin, end_of_match in matcher.spans(window) if matcher else ():
        pieces.append(html.escape(window[last:begin]))
        pieces.append(f"<mark>{html.escape(window[begin:end_of_match])}</mark>")
        last = end_of_match
    pieces.append(html.escape(window[last:]))
    return prefix + window + suffix, prefix + "".join(pieces) + suffix
