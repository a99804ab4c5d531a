"""Text -> entities and relationships (pure: no Django models, no database): the names the rest of
the code uses, re-exported from the modules that own them."""

from graph.extraction.batches import ChunkGraph, MentionFound, extract_batches, extract_texts, with_cited_authors
from graph.extraction.keys import canonical_key, display_name
from graph.extraction.lexicon import words_never_nouns
from graph.extraction.relations import RelationFound
from graph.extraction.typing import type_for_name

__all__ = [
    "ChunkGraph",
    "MentionFound",
    "RelationFound",
    "canonical_key",
    "display_name",
    "extract_batches",
    "extract_texts",
    "type_for_name",
    "with_cited_authors",
    "words_never_nouns",
]
