"""The English the model knows: a word's lemma, the words of each part of speech from the
lemmatizer's tables, and the list of words that are never nouns, kept in a file for auto-tagging."""

from __future__ import annotations

import functools
import json
import logging
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from django.conf import settings

from graph.extraction import pipeline as spacy_pipeline
from graph.extraction.pipeline import get_nlp

logger = logging.getLogger(__name__)


def lemma_of(token) -> str:
    lemmatizer = get_nlp().get_pipe("lemmatizer")
    lemmas = lemmatizer.rule_lemmatize(token) if token.pos_ else [token.lower_]
    return (lemmas[0] if lemmas else token.lower_).lower()


@functools.cache
def words_of(pos: str) -> frozenset[str]:
    """English words of one part of speech, from the lemmatizer's tables the model ships with."""
    tables = spacy_pipeline.lemma_lookups()
    return frozenset(tables.get_table("lemma_index").get(pos, [])) if tables.has_table("lemma_index") else frozenset()


@functools.cache
def english_words() -> frozenset[str]:
    """Every English noun, verb, adjective and adverb the model's tables hold."""
    return words_of("noun") | words_of("verb") | words_of("adj") | words_of("adv")


def words_never_nouns() -> frozenset[str]:
    """English verbs, adjectives and adverbs that are never nouns ("naive", "linear", "restart").

    Auto-tagging asks for them in every process that creates a memory, web workers included, which
    otherwise never import spaCy; reading its tables means importing it (about 2.5 s and its memory).
    So the list is kept in a file under the data directory, one per model version, written by the
    first process that derives it; a file that cannot be read is derived again."""
    cache = _never_nouns_file()
    try:
        return frozenset(json.loads(cache.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    words = (words_of("verb") | words_of("adj") | words_of("adv")) - words_of("noun")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        staged = cache.with_suffix(f".{os.getpid()}.tmp")
        staged.write_text(json.dumps(sorted(words)), encoding="utf-8")
        staged.replace(cache)  # whole or not at all, whichever process writes it
    except OSError:
        logger.warning("could not keep the never-nouns word list in %s", cache, exc_info=True)
    return words


def _never_nouns_file() -> Path:
    try:
        model = f"{spacy_pipeline.SPACY_MODEL}-{version(spacy_pipeline.SPACY_MODEL.replace('_', '-'))}"
    except PackageNotFoundError:
        model = spacy_pipeline.SPACY_MODEL
    return Path(settings.DATA_DIR) / "cache" / f"never-nouns-{model}-v1.json"
