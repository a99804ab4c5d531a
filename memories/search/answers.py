"""Extractive answers for the chat, with no LLM: the 1–3 sentences from a person's memories that best
answer a message, each with the memory and chunk it came from.

How: hybrid search finds the best chunks (memories.search); spaCy's rule-based sentencizer splits them
into sentences; each sentence is scored by its meaning (cosine of all-MiniLM-L6-v2 embeddings with the
question), by how many of the question's content words it contains, and by its chunk's search score.
Chat messages are memories too, so questions someone typed into the chat are never cited as answers.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max

from memories import embedding
from memories.models import Memory, MemoryChunk
from memories.search import QUESTION, SearchError, SearchFilters, hybrid_search, questions
from memories.search.questions import KINDS
from memories.selectors import chat_session_exchanges

CANDIDATE_CHUNKS = 8
MAX_SENTENCES = 3
MAX_CANDIDATES = 48  # sentences embedded per question (embedding is the slow part)
MIN_SCORE = 0.35  # below this no sentence is offered as an answer
KEEP_WITHIN = 0.12  # further sentences must score within this of the best one
SENTENCE_MIN_CHARS = 12
SENTENCE_MAX_CHARS = 600
WEIGHTS = {"meaning": 0.6, "words": 0.3, "chunk": 0.1}

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")


@dataclass
class AnswerSentence:
    text: str
    memory_id: int
    memory_title: str
    chunk_position: int
    score: float


@dataclass
class Answer:
    question: str
    sentences: list[AnswerSentence] = field(default_factory=list)


_lock = threading.Lock()
_nlp = None


def _sentencizer():
    """spaCy's blank English pipeline with its rule-based sentencizer: no model weights, fast, maintained."""
    global _nlp
    with _lock:
        if _nlp is None:
            import spacy

            nlp = spacy.blank("en")
            nlp.add_pipe("sentencizer")
            _nlp = nlp
    return _nlp


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.MULTILINE)


def split_sentences(text: str) -> list[str]:
    """Sentences of a text; blank lines and list items also end a sentence. Markdown headings
    ("# Mortgage comparison") are labels, not statements, so they are never offered as sentences."""
    sentences: list[str] = []
    text = _HEADING.sub("\n\n", text)
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)", text):
        block = " ".join(block.split())
        if not block:
            continue
        sentences.extend(s.text.strip() for s in _sentencizer()(block).sents if s.text.strip())
    return sentences


def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def content_words(text: str) -> set[str]:
    """Lower-cased words that carry meaning, cut to a 5-letter stem so 'plans' meets 'planned'."""
    stop = _stop_words()
    return {w.lower()[:5] for w in _WORD.findall(text) if w.lower() not in stop and len(w) > 1}


def is_question(sentence: str) -> bool:
    """The chat's own rule (memories.search.questions): a sentence of a chat message that asks something
    is never quoted back as an answer, while "Where I parked: level 3." is."""
    return questions.asks(sentence)


def asks(message) -> bool:
    """Whether the chat answers a chat message (a memory): its `metadata.kind` when it has one, which
    the memory service set by the question rule or a person chose (memories.services.kinds); a note
    by the rule that still asks something ("Finished the pottery course today. Have you tried it?")
    is answered too, unless it is a long note that merely ends with a question."""
    kind = (message.metadata or {}).get("kind")
    if kind in KINDS:
        return kind == QUESTION
    return questions.wants_answer(message.content)


def answer_message(*, user, message, later_ids=()) -> Answer:
    """The reply to a chat message: one that asks something gets its extractive answer; a note
    ("Parked on level 3, bay C42.") is kept, not answered, so its reply cites nothing and only lists
    the related memories. `later_ids`: the session's messages sent after it, which its reply, shown
    again, leaves out as it did when it was sent."""
    if not asks(message):
        return Answer(question=message.content)
    return answer_question(user=user, question=message.content, exclude_memory_ids=[message.pk, *later_ids])


def answer_question(*, user, question: str, exclude_memory_ids=(), max_sentences: int = MAX_SENTENCES) -> Answer:
    """The best 1–`max_sentences` sentences answering `question` from the user's memories (maybe none).

    Memories in `exclude_memory_ids` (the message itself) are skipped, and so is any sentence of a chat
    memory that is itself a question."""
    answer = Answer(question=question)
    if not question or not question.strip():
        return answer
    try:
        response = hybrid_search(user.pk, question[:2000], limit=CANDIDATE_CHUNKS, filters=SearchFilters())
    except SearchError:
        return answer
    excluded = set(exclude_memory_ids)
    results = [r for r in response.results if r.memory_id not in excluded]
    candidates = _candidate_sentences(results, owner_id=user.pk)
    if not candidates:
        return answer
    wanted = content_words(question)
    if len(candidates) > MAX_CANDIDATES:
        # Keep the sentences sharing most words with the question, then those from the better chunks
        # (candidates are in chunk rank order and sorted() is stable).
        candidates = sorted(candidates, key=lambda c: -len(wanted & content_words(c[0])))[:MAX_CANDIDATES]
    scored = _scored_sentences(question, wanted, candidates, best_chunk=max(r.hybrid_score for r in results) or 1.0)
    answer.sentences = _best_sentences(scored, max_sentences=max_sentences)
    return answer


def _candidate_sentences(results, *, owner_id: int) -> list[tuple]:
    """(sentence, result, chunk position) for every sentence of the results' chunks, in result order,
    that is of answer length and, in a chat memory, is not itself a question."""
    if not results:
        return []
    chunk_rows = {
        row["pk"]: row
        for row in MemoryChunk.objects.filter(owner_id=owner_id, pk__in=[r.chunk_id for r in results]).values(
            "pk", "position", "text"
        )
    }
    candidates = []
    for result in results:
        row = chunk_rows.get(result.chunk_id)
        if row is None:
            continue
        for sentence in split_sentences(row["text"]):
            if not SENTENCE_MIN_CHARS <= len(sentence) <= SENTENCE_MAX_CHARS:
                continue
            if result.source == "chat" and is_question(sentence):
                continue
            candidates.append((sentence, result, row["position"]))
    return candidates


def _scored_sentences(question: str, wanted: set[str], candidates: list[tuple], *, best_chunk: float):
    """Each candidate scored by meaning (cosine to the question), shared words and its chunk's rank,
    best first."""
    vectors = embedding.embed_texts([question, *(c[0] for c in candidates)])
    meaning = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    scored = []
    for (sentence, result, position), cosine in zip(candidates, meaning, strict=True):
        words = len(wanted & content_words(sentence)) / len(wanted) if wanted else 0.0
        score = (
            WEIGHTS["meaning"] * float(cosine)
            + WEIGHTS["words"] * words
            + WEIGHTS["chunk"] * result.hybrid_score / best_chunk
        )
        scored.append(
            AnswerSentence(
                text=sentence,
                memory_id=result.memory_id,
                memory_title=result.title,
                chunk_position=position,
                score=round(score, 4),
            )
        )
    scored.sort(key=lambda s: -s.score)
    return scored


def _best_sentences(scored: list[AnswerSentence], *, max_sentences: int) -> list[AnswerSentence]:
    """Up to max_sentences distinct sentences within KEEP_WITHIN of the best; none when the best is
    below MIN_SCORE."""
    if scored[0].score < MIN_SCORE:
        return []
    top = scored[0].score
    kept: list[AnswerSentence] = []
    seen: set[str] = set()
    for item in scored:
        key = " ".join(item.text.lower().split())
        if key in seen or item.score < top - KEEP_WITHIN:
            continue
        seen.add(key)
        kept.append(item)
        if len(kept) == max_sentences:
            break
    return kept


def chat_exchanges(*, session) -> list[dict]:
    """Each message of a chat session with its extractive answer and the related memories."""
    # An answer only changes when the person's memories do, so it is kept until then.
    state = Memory.objects.filter(owner_id=session.owner_id).aggregate(n=Count("id"), last=Max("updated_at"))
    stamp = f"{state['n']}:{state['last'].timestamp() if state['last'] else 0}"
    exchanges = chat_session_exchanges(session=session)
    for i, exchange in enumerate(exchanges):
        message = exchange["message"]
        if message.metadata.get("importedFrom"):  # an imported conversation: its own answers follow
            exchange["answer"], exchange["asks"] = Answer(question=""), False
            exchange["imported"] = message.metadata.get("role", "user")
            continue
        key = f"chat-answer:{message.pk}:{stamp}"
        answer = cache.get(key)
        if answer is None:
            later = [e["message"].pk for e in exchanges[i + 1 :]]
            answer = answer_message(user=session.owner, message=message, later_ids=later)
            cache.set(key, answer, 3600)
        exchange["answer"] = answer
        exchange["asks"] = asks(message)
    return exchanges
