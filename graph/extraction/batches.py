"""Texts in, graphs out: each text cut into pieces the pipeline reads in batches, on forked workers
when there are several, and each piece's spans and relations collected into its chunk's graph.

The spaCy pipeline is English; a text in another language (core.language) is read by the
language-neutral rules of graph.extraction.neutral instead, so English NER and noun-phrase rules
never run on Russian, German or Japanese (docs/features/languages.md)."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from core import workers
from core.language import WINDOW_CHARS, detect_language, is_filler, looks_english, mostly_latin
from graph.extraction import pipeline as spacy_pipeline
from graph.extraction.addresses import address_towns
from graph.extraction.keys import canonical_key, clean_text
from graph.extraction.layout import mask_header_rows, mask_markup
from graph.extraction.neutral import neutral_spans
from graph.extraction.pipeline import get_nlp
from graph.extraction.relations import RelationFound, sentence_relations
from graph.extraction.spans import entity_spans
from graph.vocabulary import CONCEPT, GROUP, LOCATION, PERSON, PRODUCT, TECHNOLOGY, WORK

logger = logging.getLogger(__name__)


# Bounded work: a chunk is analysed in pieces of at most PIECE_CHARS, only its first max_chars
# characters are read, and it keeps at most MAX_MENTIONS_PER_CHUNK mentions.
PIECE_CHARS = 3000
MAX_MENTIONS_PER_CHUNK = 400
# The language the spaCy pipeline reads. A Latin-script text whose language cannot be told (a few
# words, a line of names, a table of figures) goes to it too, as everything did before languages
# were read; one in another script is not English whatever it says.
PIPELINE_LANGUAGE = "en"


@dataclass(frozen=True)
class MentionFound:
    """An entity's mention in a chunk: the key it is filed under, its name and type, and where it is."""

    key: str
    name: str
    type: str
    start: int
    end: int


@dataclass
class ChunkGraph:
    """What one chunk's text says: its mentions and the relations between them."""

    mentions: list[MentionFound] = field(default_factory=list)
    relations: list[RelationFound] = field(default_factory=list)


def _pieces(text: str, *, size: int = PIECE_CHARS) -> list[tuple[int, str]]:
    """Split text into (offset, piece) of at most `size` characters, at a paragraph, sentence or space."""
    pieces: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            window = text[start:end]
            cut = max(window.rfind("\n"), window.rfind(". "), window.rfind("? "), window.rfind("! "))
            if cut < size // 2:
                cut = window.rfind(" ")
            if cut >= size // 2:
                end = start + cut + 1
        pieces.append((start, text[start:end]))
        start = end
    return pieces


def _analyse(doc, offset: int, graph: ChunkGraph) -> None:
    found = entity_spans(doc)
    for item in found:
        if len(graph.mentions) >= MAX_MENTIONS_PER_CHUNK:
            break
        graph.mentions.append(MentionFound(item.key, item.name, item.type, offset + item.start, offset + item.end))
    graph.relations.extend(sentence_relations(found))


def text_language(text: str) -> str:
    """The language a chunk is read in: that of its opening window (a chunk is one passage)."""
    return detect_language(text[:WINDOW_CHARS])


def reads_english(text: str, language: str) -> bool:
    """Whether the English pipeline reads a text: English, or unknown and written in Latin script."""
    return language == PIPELINE_LANGUAGE or (language == "" and mostly_latin(text))


def _neutral(text: str, language: str) -> ChunkGraph:
    graph = ChunkGraph()
    for item in neutral_spans(text, language)[:MAX_MENTIONS_PER_CHUNK]:
        graph.mentions.append(MentionFound(item.key, item.name, item.type, item.start, item.end))
    return graph


# A paragraph this long (in letters) is read for its own language; a shorter one (a heading, a
# line of a table) goes with the text around it.
PARAGRAPH_LETTERS = 60
_PARAGRAPH = re.compile(r"[^\n]+(?:\n(?![ \t]*\n)[^\n]*)*")


def other_language_paragraphs(text: str) -> list[tuple[int, int, str]]:
    """(start, end, language) of the paragraphs of an English text that are written in another
    language: a bilingual document, a quotation in the original. The English model reads them as
    English, and every run of their capitalised words became a name ("Todos los", "humanos nacen")."""
    if "\n" not in text.strip():
        return []  # one paragraph: the text's own language is its language
    found = []
    for match in _PARAGRAPH.finditer(text):
        paragraph = match.group()
        if sum(ch.isalpha() for ch in paragraph) < PARAGRAPH_LETTERS or looks_english(paragraph):
            continue
        language = detect_language(paragraph)
        if language and not reads_english(paragraph, language):
            found.append((match.start(), match.end(), language))
    return found


def _english_and_other(text: str) -> tuple[str, ChunkGraph]:
    """The text with its paragraphs in other languages blanked, for the English model (offsets kept),
    and the mentions found in those paragraphs by the rules of their languages."""
    others = other_language_paragraphs(text)
    graph = ChunkGraph()
    if not others:
        return text, graph
    pieces, last = [], 0
    for start, end, language in others:
        pieces.append(text[last:start])
        pieces.append(" " * (end - start))
        last = end
        for item in neutral_spans(mask_header_rows(text[start:end]), language):
            graph.mentions.append(MentionFound(item.key, item.name, item.type, start + item.start, start + item.end))
    pieces.append(text[last:])
    return "".join(pieces), graph


def with_address_towns(text: str, graph: ChunkGraph) -> None:
    """The towns of the text's address lines (graph.extraction.addresses) are places. A mention of one
    becomes a place's, with every other mention of its entity in the chunk; a concept that holds one
    and more ("D-63571 Gelnhausen Rechnung", read across the address's lines) becomes the town; a
    town no rule found is added. Relations follow their entities' new keys."""
    renamed: dict[str, str] = {}
    mentions = list(graph.mentions)
    for town in address_towns(text):
        town_key = canonical_key(town.name, LOCATION)
        over = [m for m in mentions if m.start < town.end and town.start < m.end]
        for mention in over:
            if town.start <= mention.start and mention.end <= town.end:
                if mention.type != LOCATION:
                    renamed[mention.key] = canonical_key(mention.name, LOCATION)
            elif mention.type == CONCEPT and mention.start <= town.start and town.end <= mention.end:
                mentions[mentions.index(mention)] = MentionFound(town_key, town.name, LOCATION, town.start, town.end)
                renamed.setdefault(mention.key, town_key)
        if not over:
            mentions.append(MentionFound(town_key, town.name, LOCATION, town.start, town.end))
    _retype(graph, mentions, renamed, LOCATION)


# The types a citation overrules: what the rules call an unknown surname ("Venkatesh" a concept, a
# location or a product), not an organisation or a person.
_CITED_OVERRULES = frozenset([CONCEPT, LOCATION, PRODUCT, WORK, TECHNOLOGY, GROUP])


def with_cited_authors(graph: ChunkGraph, authors: frozenset[str]) -> None:
    """A one-word name its document cites as an author (graph.extraction.citations.cited_authors, read
    over the whole document: a reference list is seldom in the chunk that names the author) is a
    person, with every mention of its entity in the chunk and its relations."""
    if not authors:
        return
    renamed = {
        m.key: canonical_key(m.name, PERSON) for m in graph.mentions if m.name in authors and m.type in _CITED_OVERRULES
    }
    _retype(graph, graph.mentions, renamed, PERSON)


def _retype(graph: ChunkGraph, mentions: list[MentionFound], renamed: dict[str, str], kind: str) -> None:
    """The graph with these mentions, those of the renamed keys given their new key and this type, and
    the relations following them."""
    graph.mentions = sorted(
        (
            MentionFound(renamed[m.key], m.name, kind, m.start, m.end) if m.key in renamed and m.type != kind else m
            for m in mentions
        ),
        key=lambda mention: mention.start,
    )
    if renamed:
        graph.relations = [
            replace(
                r,
                source_key=renamed.get(r.source_key, r.source_key),
                target_key=renamed.get(r.target_key, r.target_key),
            )
            for r in graph.relations
        ]


def _extract_serial(texts: Sequence[str], max_chars: int, batch_size: int) -> list[ChunkGraph]:
    graphs = [ChunkGraph() for _ in texts]
    english: list[tuple[int, str]] = []
    read: list[str] = []
    for i, text in enumerate(texts):
        text = mask_markup(clean_text(text[:max_chars]))
        read.append(text)
        language = text_language(text)
        if is_filler(text):
            continue  # Lorem ipsum names nothing ("Cras", "Donec" are no organisations)
        if reads_english(text, language):
            text, graphs[i] = _english_and_other(text)
            english.append((i, text))
        else:
            graphs[i] = _neutral(mask_header_rows(text), language)
    jobs = [(i, offset, piece) for i, text in english for offset, piece in _pieces(text) if piece.strip()]
    done = 0
    try:
        docs = spacy_pipeline.pipe((piece for _, _, piece in jobs), batch_size=batch_size)
        for (i, offset, _), doc in zip(jobs, docs, strict=True):
            _analyse(doc, offset, graphs[i])
            done += 1
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, UnicodeError) as exc:
        # Odd text can trip the tokenizer or a component inside a batch; the batch's other pieces are
        # still read, one by one, and only a piece that fails on its own is left out (and logged).
        logger.warning(
            "entity extraction failed in a batch (%s: %s); reading its pieces one by one", type(exc).__name__, exc
        )
        for i, offset, piece in jobs[done:]:
            partial_graph = ChunkGraph()
            try:
                for doc in spacy_pipeline.pipe([piece], batch_size=1):
                    _analyse(doc, offset, partial_graph)
            except (TypeError, ValueError, IndexError, KeyError, AttributeError, UnicodeError) as piece_exc:
                logger.warning(
                    "entity extraction skipped a piece of %d characters (%s: %s)",
                    len(piece),
                    type(piece_exc).__name__,
                    piece_exc,
                )
                continue
            graphs[i].mentions.extend(partial_graph.mentions)
            graphs[i].relations.extend(partial_graph.relations)
    for i, _ in english:  # in text order, those of paragraphs in other languages among them
        graphs[i].mentions.sort(key=lambda mention: mention.start)
    for text, graph in zip(read, graphs, strict=True):
        with_address_towns(text, graph)
    return graphs


def _extract_child(texts: Sequence[str], *, max_chars: int, batch_size: int) -> list[ChunkGraph]:
    """_extract_serial in a forked worker: one BLAS thread each, as the workers already fill the cores."""
    from threadpoolctl import threadpool_limits  # only forked workers need it

    with threadpool_limits(limits=1, user_api="blas"):
        return _extract_serial(texts, max_chars, batch_size)


def extract_batches(
    batches: Iterable[Sequence[str]], *, processes: int = 1, max_chars: int = 100_000, batch_size: int = 256
) -> Iterator[list[ChunkGraph]]:
    """The graphs of each batch of texts, batch by batch in order. With processes > 1 the batches go
    to the forked workers, so while the caller stores one batch's graphs the next are extracted;
    workers return small tuples rather than spaCy Docs, so little is copied back."""
    return workers.map_batches(
        partial(_extract_child, max_chars=max_chars, batch_size=batch_size),
        batches,
        workers=processes,
        min_items=processes * 16,
        prepare=get_nlp,
    )


def extract_texts(
    texts: Sequence[str], *, processes: int = 1, max_chars: int = 100_000, batch_size: int = 256
) -> list[ChunkGraph]:
    """Entities and relations of each text, in input order, split across `processes` workers."""
    texts = list(texts)
    size = max(16, math.ceil(len(texts) / max(1, processes)))
    return [
        graph
        for part in extract_batches(
            (texts[i : i + size] for i in range(0, len(texts), size)),
            processes=processes,
            max_chars=max_chars,
            batch_size=batch_size,
        )
        for graph in part
    ]
