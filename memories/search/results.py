"""What a search returns: one scored result per chunk (or memory) and the response around them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.urls import reverse

from memories.search.questions import QUESTION


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


def result_url(memory_id: int, chunk_index: int) -> str:
    """The click-through that opens a memory at a chunk: following it counts as an access (appearing
    in results does not), and it redirects to the memory page at `?chunk=<position>#chunk-<position>`
    (the page shows the right page of chunks, scrolls to the anchor and highlights it)."""
    return f"{reverse('memories:open', args=[memory_id])}?chunk={chunk_index}"


@dataclass
class SearchResponse:
    results: list[SearchResult]
    took_ms: float
    query_terms: list[str]
    min_score: float | None = None  # the caller's hybridScore floor; None: the good-match rule applied
    floor: str = ""  # the floor applied, as a person reads it
    weaker_count: int = 0  # candidates left out by the floor (a page can offer to show them)
    reason: str = ""  # why there is nothing to search for, when the query has no usable words
