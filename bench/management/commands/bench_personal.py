"""Benchmark: search on a small labelled personal collection (notes, files, chat messages).

The collection and its judged queries live in bench/data/personal/ (see its README). It is loaded
afresh into a bench user through the real services (notes through memory_create_many, files through
upload_files, chat messages through chat_message_send, so questions are classified as in use), then
every query runs as an API caller's default search would: limit=10, the relevance floor on, results
as chunks and the first chunk of each memory counted. The last line is JSON:

    top1                   share of answerable queries whose first result is the answer (grade 2)
    mrr@10                 mean reciprocal rank of the first answer in the top 10
    ndcg@5                 graded nDCG at 5 (grade 2 = the answer, 1 = also relevant)
    no_answer_empty        share of no-answer queries that return zero results
    question_above_answer  share of (query, answer) pairs where a chat question asking about that
                           answer is ranked above it (or shown while the answer is not)
    paraphrase_top1        top1 over the queries that share no word with their answer (reported apart:
                           they depend most on the embedding model)
    by_type                top1 per query type
    floor_sweep            top1 and no_answer_empty at other floors (from the same unfloored rankings)
    calibration            the floor that best separates answers from no-answer queries (see
                           `calibrate`), which is how KYBERNESIS_SEARCH_MIN_SCORE was chosen
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand, CommandError

from memories import embedding, search
from memories.models import Memory
from memories.search import scoring
from memories.services import (
    MemoryInput,
    chat_message_send,
    memory_create_many,
    upload_files,
)

BENCH_USER = "bench-personal"
DATA = Path(__file__).resolve().parents[2] / "data" / "personal"


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_collection(owner, items: list[dict]) -> dict[int, str]:
    """Store the collection for `owner` (replacing what it had); returns {memory pk: collection id}."""
    Memory.objects.filter(owner=owner).delete()
    ids: dict[int, str] = {}
    notes = [item for item in items if item["type"] == "note"]
    for item, memory in zip(
        notes,
        memory_create_many(
            owner=owner, items=[MemoryInput(title=item["title"], content=item["content"]) for item in notes]
        ),
        strict=True,
    ):
        ids[memory.pk] = item["id"]
    files = [item for item in items if item["type"] == "file"]
    results = upload_files(
        owner=owner, files=[SimpleUploadedFile(item["title"], item["content"].encode()) for item in files]
    )
    for item, result in zip(files, results, strict=True):
        if result.memory is None:
            raise CommandError(f"{item['id']}: the upload was {result.status} ({result.error})")
        ids[result.memory.pk] = item["id"]
    session = None
    for item in (item for item in items if item["type"] == "chat"):
        session, memory = chat_message_send(owner=owner, content=item["content"], session=session)
        ids[memory.pk] = item["id"]
    return ids


def dcg(grades: list[int]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(grades))


def calibrate(answer_scores: list[float], no_answer_top: list[float]) -> dict:
    """The floor that best separates answers from no-answer queries: on a 0.01 grid, the floors with
    the highest balanced accuracy (mean of the share of answers kept and the share of no-answer
    queries left empty); the middle of that range, so neither side is favoured by a hair."""

    def accuracy(at: float) -> float:
        kept = sum(s >= at for s in answer_scores) / max(len(answer_scores), 1)
        empty = sum(s < at for s in no_answer_top) / max(len(no_answer_top), 1)
        return (kept + empty) / 2

    grid = [round(0.10 + i / 100, 2) for i in range(51)]
    scores = {at: accuracy(at) for at in grid}
    best = max(scores.values())
    top = [at for at in grid if scores[at] == best]
    return {"balanced_accuracy": round(best, 4), "range": [top[0], top[-1]], "floor": round((top[0] + top[-1]) / 2, 2)}


class Command(BaseCommand):
    help = "top-1, MRR@10, nDCG@5, no-answer and question-ranking figures on the labelled personal collection."

    def add_arguments(self, parser):
        parser.add_argument("--data", default=str(DATA), help="folder with memories.jsonl and queries.jsonl")
        parser.add_argument("--min-score", type=float, default=None, help="floor (default: the setting)")
        parser.add_argument("--lexical-form", choices=search.LEXICAL_FORMS, default=None)
        parser.add_argument("--verbose", action="store_true", help="print each query's ranking")

    def handle(self, *args, data: str, min_score: float | None, lexical_form: str | None, verbose: bool, **options):
        folder = Path(data)
        items = read_jsonl(folder / "memories.jsonl")
        queries = read_jsonl(folder / "queries.jsonl")
        if lexical_form:
            scoring.LEXICAL_FORM = lexical_form
        floor = search.default_min_score() if min_score is None else min_score
        owner, _ = get_user_model().objects.get_or_create(
            username=BENCH_USER, defaults={"email": f"{BENCH_USER}@localhost"}
        )
        ids = load_collection(owner, items)
        asked = {}  # answer id -> the chat questions that ask about it
        for item in items:
            for answer in item.get("asks_about", ()):
                asked.setdefault(answer, set()).add(item["id"])
        embedding.embed_query("warm-up")
        rankings = {q["id"]: self._ranking(owner, q, ids, verbose=verbose) for q in queries}
        self.stdout.write(json.dumps(_report(queries, rankings, ids, asked, floor=floor, items=len(items))))

    def _ranking(self, owner, query: dict, ids: dict, *, verbose: bool) -> list:
        """The query's top 10 results, one per memory (the best chunk's), with no floor."""
        response = search.hybrid_search(owner.pk, query["text"], limit=10, min_score=0.0)
        seen, ranked = set(), []
        for r in response.results:
            if r.memory_id not in seen:
                seen.add(r.memory_id)
                ranked.append(r)
        if verbose:
            self.stderr.write(
                f"{query['id']} {query['text']!r} -> "
                + ", ".join(
                    f"{ids[r.memory_id]}{'?' if r.is_question else ''}:{r.hybrid_score:.3f}" for r in ranked[:5]
                )
            )
        return ranked


def _questions_above_answers(query: dict, order: list, asked: dict) -> tuple[int, int]:
    """(pairs, above): of the chat questions asking about this query's answers (and not themselves
    relevant), how many rank above their answer (or appear while it does not)."""
    pairs = above = 0
    for answer, grade in query["relevant"].items():
        for question in asked.get(answer, ()):
            if grade != 2 or question in query["relevant"]:
                continue
            pairs += 1
            if question in order and (answer not in order or order.index(question) < order.index(answer)):
                above += 1
    return pairs, above


def _evaluate(at: float, queries: list, rankings: dict, ids: dict, asked: dict) -> dict:
    """The figures with results below `at` dropped."""
    answerable = [q for q in queries if q.get("relevant")]
    no_answer = [q for q in queries if not q.get("relevant")]
    top1 = mrr = ndcg = 0.0
    by_type: dict[str, list[float]] = {}
    pairs = above = 0
    for q in answerable:
        kept = search.order_results([r for r in rankings[q["id"]] if r.hybrid_score >= at], floor=at)
        order = [ids[r.memory_id] for r in kept]
        grades = [q["relevant"].get(doc, 0) for doc in order]
        hit = float(bool(grades) and grades[0] == 2)
        top1 += hit
        by_type.setdefault(q["type"], []).append(hit)
        first = next((i for i, g in enumerate(grades) if g == 2), None)
        mrr += 1 / (first + 1) if first is not None else 0.0
        ideal = dcg(sorted(q["relevant"].values(), reverse=True)[:5])
        ndcg += dcg(grades[:5]) / ideal if ideal else 0.0
        q_pairs, q_above = _questions_above_answers(q, order, asked)
        pairs, above = pairs + q_pairs, above + q_above
    empty = sum(1 for q in no_answer if not any(r.hybrid_score >= at for r in rankings[q["id"]]))
    n = max(len(answerable), 1)
    return {
        "top1": round(top1 / n, 4),
        "mrr@10": round(mrr / n, 4),
        "ndcg@5": round(ndcg / n, 4),
        "no_answer_empty": round(empty / max(len(no_answer), 1), 4),
        "question_above_answer": round(above / pairs, 4) if pairs else 0.0,
        "question_pairs": pairs,
        "by_type": {t: round(sum(v) / len(v), 4) for t, v in sorted(by_type.items())},
    }


def _report(queries: list, rankings: dict, ids: dict, asked: dict, *, floor: float, items: int) -> dict:
    """The figures at the floor, a sweep of floors, and the score calibration."""
    result = _evaluate(floor, queries, rankings, ids, asked)
    result["paraphrase_top1"] = result["by_type"].get("paraphrase", 0.0)
    result["min_score"] = floor
    result["lexical_form"] = scoring.LEXICAL_FORM
    result["queries"] = len([q for q in queries if q.get("relevant")])
    result["no_answer_queries"] = len([q for q in queries if not q.get("relevant")])
    result["memories"] = items
    result["floor_sweep"] = {
        f"{at:.2f}": {
            k: v for k, v in _evaluate(at, queries, rankings, ids, asked).items() if k in ("top1", "no_answer_empty")
        }
        for at in (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
    }
    answer_scores = sorted(
        next((r.hybrid_score for r in rankings[q["id"]] if q["relevant"].get(ids[r.memory_id]) == 2), 0.0)
        for q in queries
        if q.get("relevant")
    )
    no_answer_top = sorted(
        max((r.hybrid_score for r in rankings[q["id"]]), default=0.0) for q in queries if not q.get("relevant")
    )
    result["calibration"] = calibrate(answer_scores, no_answer_top)
    result["answer_score_quantiles"] = [
        round(answer_scores[int(p * (len(answer_scores) - 1))], 3) for p in (0.05, 0.1, 0.25, 0.5)
    ]
    result["no_answer_top_scores"] = [round(s, 3) for s in no_answer_top]
    return result
