"""How a candidate's scores are made, all in 0..1:

    vectorScore   = max(0, cosine similarity of the query and the chunk embeddings)
                    (a chunk is embedded as "title — chunk text", see embedding.chunk_embedding_text)
    metadataScore = 0.85 · lexical + 0.10 · tags + 0.05 · priority
        lexical   = BM25F(query, chunk) / the highest BM25F among this query's candidates
                    × √(matched IDF share)
                    where matched IDF share = Σ idf of the query terms the chunk contains
                                              / Σ idf of all the query's terms
                    (BM25F: the memory title is a field of its first chunk, a title word counting as
                    two occurrences, memories.search.lexical.TITLE_WEIGHT; counted once per memory, and not
                    when the text already opens with the title)
        tags      = share of the query's terms found in the memory's combined tags
        priority  = the memory's priority
    hybridScore   = 0.7 · vectorScore + 0.3 · metadataScore   (KYBERNESIS_SEARCH_*_WEIGHT)

One result per memory (groupBy=memory): a memory's hybridScore is its best good passage's, and how many
of its other passages are good matches too is reported beside it (parts.goodPassages), not added
to it (see memories.search.results.group_by_memory). A long document has many passages and so many chances to match a
little; scoring it by its best one alone means a 100-page document comes first only for the
queries one of its passages answers best, never for having many passages.

The IDF share is what makes a keyword score mean "how much of what you asked for is here": a chunk
that matches one of five equally rare query words scores √(1/5) ≈ 0.45, not 1.0, however few
candidates there are. The square root keeps both data sets: the linear share separates answers from
no-answer queries a little better on the personal set but costs SciFact, whose long claims rarely
match every word (the figures: docs/decisions/0005-keyword-score.md).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memories.search import lexical

if TYPE_CHECKING:
    from memories.search.results import SearchResult
    from memories.search.statement import Candidate

# No title weight here: a title is a field of the lexical score (BM25F, memories.search.lexical.TITLE_WEIGHT).
LEXICAL_WEIGHT, TAG_WEIGHT, PRIORITY_WEIGHT = 0.85, 0.10, 0.05
# How the BM25F sum becomes the 0..1 lexical part (see the module docstring; "coverage_sqrt" is the
# default and the others are kept for bench_personal/bench_retrieval --lexical-form comparisons).
LEXICAL_FORMS = ("coverage", "coverage_sqrt", "relative", "attainable")
LEXICAL_FORM = "coverage_sqrt"


@dataclass(frozen=True)
class Scores:
    """A candidate's three scores, and the metadata score's components (for explanations)."""

    hybrid: float
    vector: float
    metadata: float
    parts: dict


class TagShare:
    """The tags part of metadataScore: the share of the query's terms that some word of a memory's
    tags starts with (term_share over the tags, "-" read as a space). A search scores every candidate
    with one of these, and each distinct tag is matched once: the same tags come back on candidate
    after candidate."""

    def __init__(self, terms: list[str], matcher: TermMatcher | None = None):
        self.terms = terms
        self.matcher = matcher or term_matcher(terms)
        self._known: dict[str, set[str]] = {}

    def __call__(self, tags: list[str]) -> float:
        if not self.terms:
            return 0.0
        hits: set[str] = set()
        for tag in tags:
            found = self._known.get(tag)
            if found is None:
                found = self._known[tag] = matched_terms(self.terms, tag.replace("-", " "), self.matcher)
            hits |= found
        return len(hits) / len(self.terms)


def candidate_scores(
    candidate: Candidate,
    *,
    tag_share: TagShare,
    max_bm25: float,
    weights: tuple[float, float],
) -> Scores:
    """The scores of one candidate (the formula is in the module docstring). `tag_share` reads the
    query's terms in tags, `max_bm25` is the highest BM25F among the query's candidates; `weights` are
    (vector, metadata)."""
    w_vec, w_meta = weights
    vector_score = clamp(candidate.cosine)
    lexical_part = lexical_score(candidate.bm25, max_bm25, candidate.matched_idf, candidate.total_idf or 0.0)
    tag_part = tag_share(candidate.tags)
    metadata_score = clamp(LEXICAL_WEIGHT * lexical_part + TAG_WEIGHT * tag_part + PRIORITY_WEIGHT * candidate.priority)
    total_idf = candidate.total_idf
    return Scores(
        hybrid=clamp(w_vec * vector_score + w_meta * metadata_score),
        vector=vector_score,
        metadata=metadata_score,
        parts={
            "lexical": lexical_part,
            "tags": tag_part,
            "priority": candidate.priority,
            "bm25": candidate.bm25,
            "idfShare": (candidate.matched_idf / total_idf) if total_idf else 0.0,
        },
    )


def lexical_score(bm25: float, max_bm25: float, matched_idf: float, total_idf: float, form: str | None = None) -> float:
    """The lexical part of metadataScore, 0..1 (the formula is in the module docstring)."""
    form = form or LEXICAL_FORM
    if bm25 <= 0 or total_idf <= 0:
        return 0.0
    if form == "attainable":  # a full match, each term once in an average-length chunk, scores Σ idf
        return clamp(bm25 / total_idf)
    relative = bm25 / max_bm25 if max_bm25 > 0 else 0.0
    if form == "relative":
        return clamp(relative)
    if form == "coverage_sqrt":
        return clamp(relative * math.sqrt(matched_idf / total_idf))
    return clamp(relative * matched_idf / total_idf)


def order_results(results: list[SearchResult], *, floor: float | None = None) -> list[SearchResult]:
    """Best first; among good matches (hybridScore at or above `floor` when one is given), notes
    before questions (each by score)."""

    def good(r: SearchResult) -> bool:
        return r.good_match if floor is None else r.hybrid_score >= floor

    return sorted(
        results,
        key=lambda r: (
            not good(r),
            r.is_question and good(r),
            -r.hybrid_score,
            -r.vector_score,
            r.chunk_id,
        ),
    )


def clamp(value: float) -> float:
    """The value as a score: a float from 0 to 1."""
    return float(min(1.0, max(0.0, value)))


class TermMatcher:
    """Where a query's terms stand in a text: every word that starts with a query lexeme (stems are
    prefixes of the words they come from), a one-letter term as that letter alone ("C", not every word
    that starts with it), and the CJK character pairs wherever they stand, leftmost first.

    A word is a run of letters and digits of a spaced script, and ends where CJK begins: "週末にPython
    の本" marks "Python". The terms are found as plain strings, and where a word starts and ends is
    checked beside them with patterns compiled once: a pattern holding the CJK ranges, compiled for
    each query, cost some 7 ms of a search's CPU.
    """

    def __init__(self, terms: tuple[str, ...]):
        ordered = sorted(terms, key=len, reverse=True)
        words = [t for t in ordered if not lexical.is_cjk(t) and len(t) > 1]
        letters = [t for t in ordered if not lexical.is_cjk(t) and len(t) == 1]
        pairs = [t for t in ordered if lexical.is_cjk(t)]
        groups = [(name, found) for name, found in (("word", words), ("letter", letters), ("pair", pairs)) if found]
        # Alternatives are tried in order at each place: words (longest first), then letters, then pairs.
        self._pattern = re.compile(
            "|".join(f"(?P<{name}>" + "|".join(map(re.escape, found)) + ")" for name, found in groups), re.IGNORECASE
        )

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The (start, end) of each match in the text, in order, none overlapping."""
        found: list[tuple[int, int]] = []
        search, at = self._pattern.search, 0
        while (match := search(text, at)) is not None:
            start, end = match.span()
            kind = match.lastgroup
            if kind != "pair" and start and _SPACED_CHAR.match(text, start - 1):
                at = start + 1  # inside a word: not where a word starts
                continue
            if kind == "word":
                rest = _SPACED_RUN.match(text, end)  # the rest of the word (matches, if only "")
                end = rest.end() if rest else end
            elif kind == "letter" and _SPACED_CHAR.match(text, end):
                at = start + 1  # the letter begins a longer word
                continue
            found.append((start, end))
            at = end
        return found


# A letter or digit of a spaced script (not CJK): what words are made of.
_SPACED_CHAR = re.compile(rf"[^\W{lexical.CJK_CLASS[1:-1]}]")
_SPACED_RUN = re.compile(rf"{_SPACED_CHAR.pattern}*")


def term_matcher(terms: list[str]) -> TermMatcher | None:
    """The query's terms as a TermMatcher (None without terms)."""
    return _term_matcher_of(tuple(terms)) if terms else None


@functools.lru_cache(maxsize=256)
def _term_matcher_of(terms: tuple[str, ...]) -> TermMatcher:
    """term_matcher, built once per query: a search marks its snippets and matches every candidate's
    tags with the same terms."""
    return TermMatcher(terms)


def term_share(terms: list[str], text: str, matcher: TermMatcher | None = None) -> float:
    """The share of query terms that some word of the text starts with (title and tag matching)."""
    return len(matched_terms(terms, text, matcher)) / len(terms) if terms else 0.0


def matched_terms(terms: list[str], text: str, matcher: TermMatcher | None = None) -> set[str]:
    """The query terms that some word of the text starts with (a CJK pair: that the text holds it)."""
    if not text:
        return set()
    lowered = text.lower()
    if not any(t in lowered for t in terms):  # a word that starts with a term contains it
        return set()
    matcher = matcher or term_matcher(terms)
    if matcher is None:
        return set()
    return {t for start, end in matcher.spans(text) for t in terms if text[start:end].lower().startswith(t)}
