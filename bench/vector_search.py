"""The `--vector-search` option of the search benchmarks: measure the path the product picks for an
owner, or force exact search or the HNSW index for this process."""

from __future__ import annotations

from django.conf import settings

from memories.search.statement import exact_for

CHOICES = ("auto", "exact", "index")


def add_argument(parser) -> None:
    parser.add_argument(
        "--vector-search",
        choices=CHOICES,
        default="auto",
        help="how vector candidates are found: as the product decides (KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS), "
        "always exactly, or always through the HNSW index",
    )


def apply(choice: str) -> None:
    """Force the choice in this process only (the setting the product reads per search)."""
    if choice != "auto":
        settings.KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS = 2**62 if choice == "exact" else 0


def used_for(owner_id: int) -> str:
    return "exact" if exact_for(owner_id) else "index"
