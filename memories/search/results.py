"""What a search returns: one scored result per memory (its best passage, with its next best
passages beneath) or per chunk, and the response around them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.urls import get_script_prefix, reverse

from memories.search.questions import QUESTION

# How many more of a memory's matching passages a grouped result carries beneath its best one.
MORE_PASSAGES = 2


@dataclass
class Passage:
    """Another passage (chunk) of a result's memory that matches the query, with its own scores."""

    memory_id: int
    chunk_id: int
    chunk_index: int
    hybrid_score: float
    vector_score: float
    metadata_score: float
    text: str = ""
    snippet: str = ""
    snippet_html: str = ""
    char_start: int | None = None
    char_end: int | None = None

    @property
    def url(self) -> str:
        return result_url(self.memory_id, self.chunk_index)


@dataclass
class SearchResult:
    memory_id: int
    chunk_id: int
    chunk_index: int
    title: str
    text: str
    snippet: str
    snippet_html: str
    hybrid_score: float
    vector_score: float
    metadata_score: float
    tier: str
    source: str
    tags: list[str]
    manual_tags: list[str]
    created_at: datetime | None
    kind: str = ""  # "question" for a chat message that asks something
    parts: dict = field(default_factory=dict)  # the metadata score's components, for explanations
    char_start: int | None = None  # where the passage lies in the memory's content
    char_end: int | None = None
    # Grouped by memory: how many of the memory's passages match (this one included), and the next
    # best of them (at most MORE_PASSAGES), best first. A per-chunk result is one passage.
    passage_count: int = 1
    more_passages: list[Passage] = field(default_factory=list)

    @property
    def more_count(self) -> int:
        """How many more of the memory's passages match, beyond this one ("3 more passages")."""
        return self.passage_count - 1

    @property
    def unlisted_count(self) -> int:
        """Matching passages neither shown nor listed beneath (the memory page shows them all)."""
        return self.passage_count - 1 - len(self.more_passages)

    good_match: bool = True  # passes the good-match rule (memories.search.relevance)

    @property
    def bars(self) -> list[tuple[str, float]]:
        return [("hybrid", self.hybrid_score), ("vector", self.vector_score), ("metadata", self.metadata_score)]

    @property
    def url(self) -> str:
        """Where a result leads: its memory's page, at the matched chunk. The one place this link is built."""
        return result_url(self.memory_id, self.chunk_index)

    @property
    def is_question(self) -> bool:
        return self.kind == QUESTION


def group_by_memory(
    ranked: list[SearchResult], *, good: Callable[[SearchResult], bool], more: int = MORE_PASSAGES
) -> list[SearchResult]:
    """One result per memory, from per-chunk results ranked best first: the memory's best chunk,
    whose score alone ranks the memory (a long document has many passages and so many chances to
    match; a bonus for them cost SciFact nDCG@10 0.007, docs/benchmarks.md#relevance-floor). It
    carries how many of its chunks are `good` matches and the next `more` best of them as passages;
    parts["goodPassages"] counts its other good passages. A memory with a good chunk is headed by its
    best good chunk, even when a chunk that is not good scores higher; one with none still comes back
    (the floor is applied after) with no passages beneath."""
    best: dict[int, SearchResult] = {}
    for result in ranked:
        head = best.get(result.memory_id)
        if head is None:
            best[result.memory_id] = result
            result.passage_count, result.more_passages = (1 if good(result) else 0), []
        elif good(result) and not good(head):
            # The memory's first good passage heads it: a memory is a good match when one of its
            # passages is, even where a passage that is not scores higher.
            best[result.memory_id] = result
            result.passage_count, result.more_passages = head.passage_count + 1, []
        elif good(result):
            head.passage_count += 1
            if len(head.more_passages) < more:
                head.more_passages.append(
                    Passage(
                        memory_id=result.memory_id,
                        chunk_id=result.chunk_id,
                        chunk_index=result.chunk_index,
                        hybrid_score=result.hybrid_score,
                        vector_score=result.vector_score,
                        metadata_score=result.metadata_score,
                    )
                )
    for head in best.values():
        others = head.passage_count - (1 if good(head) else 0)
        head.parts = {**head.parts, "goodPassages": others}
        head.passage_count = max(head.passage_count, 1)
    return list(best.values())


def result_url(memory_id: int, chunk_index: int) -> str:
    """The click-through that opens a memory at a chunk: following it counts as an access (appearing
    in results does not), and it redirects to the memory page at `?chunk=<position>#chunk-<position>`
    (the page shows the right page of chunks, scrolls to the anchor and highlights it)."""
    return f"{_open_url(get_script_prefix(), memory_id)}?chunk={chunk_index}"


@functools.lru_cache(maxsize=4096)
def _open_url(script_prefix: str, memory_id: int) -> str:
    """The memory's click-through path (reversing the URL is most of what serialising a result's link
    costs; a page of results names the same memories search after search)."""
    return reverse("memories:open", args=[memory_id])


@dataclass
class SearchResponse:
    results: list[SearchResult]
    took_ms: float
    query_terms: list[str]
    min_score: float | None = None  # the caller's hybridScore floor; None: the good-match rule applied
    floor: str = ""  # the floor applied, as a person reads it
    weaker_count: int = 0  # candidates left out by the floor (a page can offer to show them)
    # Of those, the chat questions that matched but answer nothing, as no note matched (memories)
    weaker_questions: int = 0
    reason: str = ""  # why there is nothing to search for, when the query has no usable words
