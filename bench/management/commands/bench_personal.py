"""Benchmark: search on a small labelled personal collection (notes, files, chat messages, documents).

Two collections and their judged queries live in bench/data/personal/ and bench/data/personal-2/
(see their READMEs; the second was written apart from the first, by another hand, about another
person's life). Each is reported on its own, never averaged with the other. A collection is loaded
afresh into a bench user through the real services (notes through memory_create_many, files through
upload_files, chat messages through chat_message_send, so questions are classified as in use), then
every query runs as an API caller's default search would: one result per memory, the relevance floor
on, the first ten counted. The floor sweep instead applies constant hybridScore floors to the
unfloored ranking (each memory by its best passage), so its figures are not those of the rule.

`--data bench/data/realdocs` is a third set made of real public documents (PDFs, Word, slides, web
pages, feeds, e-mails in seven languages; see its README). Its items are `type: "document"`: the
file named by `key` in the corpus folder's manifest.json (`--corpus DIR`, default
/work/corpus/organise-real; built by bench/organise_corpus.py) is
uploaded under its own file name through upload_files, as a browser would send it, and a queued
upload's job (a long text, pages to read by OCR) is run at once, so every document is stored before
the queries run. The set is not in the default run because its files live outside the repository.

The last line is JSON, {"sets": {name: figures}} with these figures for each collection:

    top1                   share of answerable queries whose first result is the answer (grade 2)
    mrr@10                 mean reciprocal rank of the first answer in the top 10
    ndcg@5                 graded nDCG at 5 (grade 2 = the answer, 1 = also relevant)
    no_answer_empty        share of no-answer queries that return zero results
    question_above_answer  share of (query, answer) pairs where a chat question asking about that
                           answer is ranked above it (or shown while the answer is not)
    paraphrase_top1        top1 over the queries that share no word with their answer (reported apart:
                           they depend most on the embedding model)
    by_type                top1 per query type
    by_language            top1 per query language (over the queries that give their `language`)
    floor_sweep            top1 and no_answer_empty with a constant hybridScore floor instead of the
                           good-match rule (from the same unfloored rankings)

The good-match rule itself is calibrated over several data sets by bench_calibrate (run this with
`--scores`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand, CommandError

from bench import organise_corpus
from bench.scores import ScoreRecorder
from memories import embedding, search
from memories.models import Memory, UploadJob
from memories.search import relevance, scoring
from memories.services import (
    MemoryInput,
    chat_message_send,
    memory_create_many,
    ocr_upload_run,
    upload_files,
    upload_job_run,
)

BENCH_USER = "bench-personal"
DATA = Path(__file__).resolve().parents[2] / "data"
SETS = ("personal", "personal-2")
DEFAULT_CORPUS = Path("/work/corpus/organise-real")
BUILD_HINT = "build it with: python -m bench.organise_corpus {corpus} --mirrors /work/.mirror"


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_collection(owner, items: list[dict], *, corpus: Path | None = None) -> dict[int, str]:
    """Store the collection for `owner` (replacing what it had); returns {memory pk: collection id}.
    Document items are read from `corpus` (a folder with manifest.json and the files it names)."""
    Memory.objects.filter(owner=owner).delete()
    # A job a broken run left pending would make the same file a duplicate of nothing.
    UploadJob.objects.filter(owner=owner).delete()
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
    files_sent = [SimpleUploadedFile(item["title"], item["content"].encode()) for item in files]
    results = upload_files(owner=owner, files=files_sent) if files else []
    for item, result in zip(files, results, strict=True):
        if result.memory is None:
            raise CommandError(f"{item['id']}: the upload was {result.status} ({result.error})")
        ids[result.memory.pk] = item["id"]
    session = None
    for item in (item for item in items if item["type"] == "chat"):
        session, memory = chat_message_send(owner=owner, content=item["content"], session=session)
        ids[memory.pk] = item["id"]
    documents = [item for item in items if item["type"] == "document"]
    corpus = corpus or DEFAULT_CORPUS
    paths = corpus_files(corpus) if documents else {}
    for item in documents:
        if item["key"] not in paths:
            raise CommandError(f"{item['id']}: {item['key']} is not in {corpus / 'manifest.json'}")
        memory = upload_document(owner, paths[item["key"]])
        if memory.pk in ids:
            raise CommandError(f"{item['id']}: its text is the same as {ids[memory.pk]}'s")
        ids[memory.pk] = item["id"]
    return ids


def corpus_files(corpus: Path) -> dict[str, Path]:
    """{document key: its file} of a corpus folder, every file checked to exist."""
    if not corpus.is_dir():
        raise CommandError(f"no corpus folder {corpus}: " + BUILD_HINT.format(corpus=corpus))
    try:
        documents = organise_corpus.load_corpus(corpus)
    except FileNotFoundError as exc:
        raise CommandError(f"{exc}; " + BUILD_HINT.format(corpus=corpus)) from exc
    return {document.key: document.path for document in documents}


def upload_document(owner, path: Path) -> Memory:
    """Upload one file under its own name, as a browser sends it; a queued upload's job (a long text,
    pages to read by OCR) is run here, as the worker would, so the memory exists when this returns."""
    result = upload_files(owner=owner, files=[SimpleUploadedFile(path.name, path.read_bytes())])[0]
    if result.memory is None and result.job is not None:
        run = ocr_upload_run if result.job.kind == UploadJob.Kind.OCR else upload_job_run
        # None: the job is no longer pending (run by a synchronous task queue already).
        run(job_id=result.job.pk)
        job = UploadJob.objects.get(pk=result.job.pk)
        if job.memory_id is None:
            raise CommandError(f"{path.name}: its upload job ended {job.status} ({job.error or 'no memory'})")
        return Memory.objects.get(pk=job.memory_id)
    if result.memory is None:
        raise CommandError(f"{path.name}: the upload was {result.status} ({result.error})")
    return result.memory


def dcg(grades: list[int]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(grades))


class Command(BaseCommand):
    help = "top-1, MRR@10, nDCG@5, no-answer and question-ranking figures on the labelled personal collection."

    def add_arguments(self, parser):
        parser.add_argument(
            "--data",
            action="append",
            default=None,
            help="a folder with memories.jsonl and queries.jsonl (repeat for several; default: both collections)",
        )
        parser.add_argument(
            "--corpus",
            type=Path,
            default=DEFAULT_CORPUS,
            help=f"the folder of the documents of a set with document items (default: {DEFAULT_CORPUS})",
        )
        parser.add_argument("--min-score", type=float, default=None, help="floor (default: the setting)")
        parser.add_argument("--lexical-form", choices=search.LEXICAL_FORMS, default=None)
        parser.add_argument("--verbose", action="store_true", help="print each query's ranking")
        parser.add_argument("--scores", default=None, help="write per-query scores (JSONL) for bench_calibrate")

    def handle(
        self,
        *args,
        data,
        corpus: Path,
        min_score: float | None,
        lexical_form: str | None,
        verbose: bool,
        scores,
        **options,
    ):
        folders = [Path(d) for d in data] if data else [DATA / name for name in SETS]
        if lexical_form:
            scoring.LEXICAL_FORM = lexical_form
        floor = min_score  # None: the good-match rule
        embedding.embed_query("warm-up")
        reports = {}
        for number, folder in enumerate(folders):
            if not (folder / "memories.jsonl").exists():
                raise CommandError(f"no memories.jsonl in {folder}")
            recorder = ScoreRecorder(scores, data_set=folder.name, append=number > 0)
            reports[folder.name] = self._run(
                folder, corpus=Path(corpus), floor=floor, verbose=verbose, recorder=recorder
            )
            recorder.close()
        self.stdout.write(json.dumps({"sets": reports}))

    def _run(self, folder: Path, *, corpus: Path, floor: float | None, verbose: bool, recorder: ScoreRecorder) -> dict:
        items = read_jsonl(folder / "memories.jsonl")
        queries = read_jsonl(folder / "queries.jsonl")
        username = BENCH_USER if folder.name == "personal" else f"{BENCH_USER}-{folder.name}"[:150]
        owner, _ = get_user_model().objects.get_or_create(
            username=username, defaults={"email": f"{username}@localhost"}
        )
        ids = load_collection(owner, items, corpus=corpus)
        asked = {}  # answer id -> the chat questions that ask about it
        for item in items:
            for answer in item.get("asks_about", ()):
                asked.setdefault(answer, set()).add(item["id"])
        rankings = {q["id"]: self._ranking(owner, q, ids, verbose=verbose) for q in queries}
        for q in queries:
            ranked = rankings[q["id"]]
            recorder.record(
                owner=owner,
                query_id=q["id"],
                query_type=q["type"],
                text=q["text"],
                qvec=embedding.embed_query(q["text"]),
                results=ranked,
                grades=[(q.get("relevant") or {}).get(ids[r.memory_id], 0) for r in ranked],
            )
        # The good-match rule is read from the search a caller runs by default, not from the unfloored
        # ranking: a memory is kept when any of its passages is a good match, not only its best.
        served = {
            q["id"]: list(search.hybrid_search(owner.pk, q["text"], limit=100, group_by="memory").results)
            for q in queries
        }
        if verbose:
            for q in queries:
                kept = ", ".join(f"{ids[r.memory_id]}:{r.hybrid_score:.3f}" for r in served[q["id"]][:3])
                self.stderr.write(f"{q['id']} kept -> {kept or '(nothing)'}")
        return _report(queries, rankings, ids, asked, floor=floor, items=len(items), served=served)

    def _ranking(self, owner, query: dict, ids: dict, *, verbose: bool) -> list:
        """The query's results, one per memory (the best chunk's), with no floor."""
        response = search.hybrid_search(owner.pk, query["text"], limit=100, min_score=0.0, group_by="memory")
        ranked = list(response.results)
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


def _kept(results: list, at: float) -> list:
    """The results a search with this constant hybridScore floor returns, in its order."""
    return search.order_results([r for r in results if r.hybrid_score >= at], floor=at)


def _evaluate(at: float | None, queries: list, rankings: dict, ids: dict, asked: dict, served: dict) -> dict:
    """The figures with the floor `at` applied (None: the good-match rule, as `served` by default)."""

    def kept_for(query_id: str) -> list:
        return served[query_id] if at is None else _kept(rankings[query_id], at)

    answerable = [q for q in queries if q.get("relevant")]
    no_answer = [q for q in queries if not q.get("relevant")]
    top1 = mrr = ndcg = 0.0
    by_type: dict[str, list[float]] = {}
    by_language: dict[str, list[float]] = {}
    pairs = above = 0
    for q in answerable:
        kept = kept_for(q["id"])[:10]
        order = [ids[r.memory_id] for r in kept]
        grades = [q["relevant"].get(doc, 0) for doc in order]
        hit = float(bool(grades) and grades[0] == 2)
        top1 += hit
        by_type.setdefault(q["type"], []).append(hit)
        if q.get("language"):
            by_language.setdefault(q["language"], []).append(hit)
        first = next((i for i, g in enumerate(grades) if g == 2), None)
        mrr += 1 / (first + 1) if first is not None else 0.0
        ideal = dcg(sorted(q["relevant"].values(), reverse=True)[:5])
        ndcg += dcg(grades[:5]) / ideal if ideal else 0.0
        q_pairs, q_above = _questions_above_answers(q, order, asked)
        pairs, above = pairs + q_pairs, above + q_above
    empty = sum(1 for q in no_answer if not kept_for(q["id"]))
    n = max(len(answerable), 1)
    return {
        "top1": round(top1 / n, 4),
        "mrr@10": round(mrr / n, 4),
        "ndcg@5": round(ndcg / n, 4),
        "no_answer_empty": round(empty / max(len(no_answer), 1), 4),
        "question_above_answer": round(above / pairs, 4) if pairs else 0.0,
        "question_pairs": pairs,
        "by_type": {t: round(sum(v) / len(v), 4) for t, v in sorted(by_type.items())},
        "by_language": {lang: round(sum(v) / len(v), 4) for lang, v in sorted(by_language.items())},
    }


def _report(
    queries: list, rankings: dict, ids: dict, asked: dict, *, floor: float | None, items: int, served: dict
) -> dict:
    """The figures with the floor, and a sweep of constant floors."""
    result = _evaluate(floor, queries, rankings, ids, asked, served)
    result["paraphrase_top1"] = result["by_type"].get("paraphrase", 0.0)
    result["floor"] = relevance.describe() if floor is None else f"hybridScore >= {floor:.2f}"
    result["lexical_form"] = scoring.LEXICAL_FORM
    result["queries"] = len([q for q in queries if q.get("relevant")])
    result["no_answer_queries"] = len([q for q in queries if not q.get("relevant")])
    result["memories"] = items
    result["floor_sweep"] = {
        f"{at:.2f}": {
            k: v
            for k, v in _evaluate(at, queries, rankings, ids, asked, served).items()
            if k in ("top1", "no_answer_empty")
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
    result["answer_score_quantiles"] = [
        round(answer_scores[int(p * (len(answer_scores) - 1))], 3) for p in (0.05, 0.1, 0.25, 0.5)
    ]
    result["no_answer_top_scores"] = [round(s, 3) for s in no_answer_top]
    return result
