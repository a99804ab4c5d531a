"""Search over a person's memories: hybrid retrieval, its filters and scores, the lexical index, and
the chat's extractive answers. The public names of hybrid search are re-exported here."""

from memories.search.filters import (
    MAX_FILTER_DATE,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MIN_FILTER_DATE,
    SearchError,
    SearchFilters,
    search_filters,
)
from memories.search.hybrid import NO_WORDS, ONLY_COMMON_WORDS, default_min_score, hybrid_search
from memories.search.questions import QUESTION
from memories.search.results import SearchResponse, SearchResult, result_url
from memories.search.scoring import (
    LEXICAL_FORMS,
    LEXICAL_WEIGHT,
    PRIORITY_WEIGHT,
    TAG_WEIGHT,
    lexical_score,
    order_results,
    term_share,
)
from memories.search.snippets import make_snippet
from memories.search.statement import search_statement

__all__ = [
    "LEXICAL_FORMS",
    "LEXICAL_WEIGHT",
    "MAX_FILTER_DATE",
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "MIN_FILTER_DATE",
    "NO_WORDS",
    "ONLY_COMMON_WORDS",
    "PRIORITY_WEIGHT",
    "QUESTION",
    "TAG_WEIGHT",
    "SearchError",
    "SearchFilters",
    "SearchResponse",
    "SearchResult",
    "default_min_score",
    "hybrid_search",
    "lexical_score",
    "make_snippet",
    "order_results",
    "result_url",
    "search_filters",
    "search_statement",
    "term_share",
]
