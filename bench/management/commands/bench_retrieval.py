"""Benchmark: retrieval quality on a BEIR data set (SciFact) through the real ingestion and hybrid search.

Each document becomes one memory (title + text) in a dedicated user, loaded once and reused. A
document ranks by its best chunk (groupBy=memory). The last line is JSON.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from bench import vector_search as vector_search_option
from bench.datasets import read_jsonl, read_qrels
from bench.scores import ScoreRecorder
from memories import embedding, search
from memories.models import Memory
from memories.search import hybrid_search, relevance, scoring
from memories.services import MemoryInput, memory_create_many

BENCH_USER = "bench-retrieval"


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(score / math.log2(i + 2) for i, score in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant) if relevant else 0.0


class Command(BaseCommand):
    help = "nDCG@10 and recall@100 of hybrid search on a BEIR data set (default: SciFact)."

    def add_arguments(self, parser):
        parser.add_argument("--data", required=True, help="folder with corpus.jsonl, queries.jsonl, qrels.tsv")
        parser.add_argument("--docs", type=int, default=0, help="only the first N documents (0: all)")
        parser.add_argument("--queries", type=int, default=0, help="only the first N judged queries (0: all)")
        parser.add_argument("--user", default=BENCH_USER)
        parser.add_argument("--reload", action="store_true", help="drop the loaded corpus and ingest it again")
        parser.add_argument(
            "--loaded-only",
            action="store_true",
            help="ingest nothing: judge only the documents already loaded (a partly loaded corpus), with "
            "the queries whose judged documents are among them",
        )
        parser.add_argument(
            "--min-score",
            type=float,
            default=None,
            help="a hybridScore floor for the floored figures (default: the good-match rule)",
        )
        parser.add_argument("--lexical-form", choices=search.LEXICAL_FORMS, default=None)
        parser.add_argument("--scores", default=None, help="write per-query scores (JSONL) for bench_calibrate")
        vector_search_option.add_argument(parser)

    def handle(
        self,
        *args,
        data: str,
        docs: int,
        queries: int,
        user: str,
        reload: bool,
        loaded_only: bool,
        min_score: float | None,
        lexical_form: str | None,
        vector_search: str,
        scores: str | None,
        **options,
    ):
        if lexical_form:
            scoring.LEXICAL_FORM = lexical_form
        vector_search_option.apply(vector_search)
        floor = min_score  # None: the good-match rule
        folder = Path(data)
        if not (folder / "corpus.jsonl").exists():
            raise CommandError(f"no corpus.jsonl in {folder}")
        corpus = read_jsonl(folder / "corpus.jsonl")
        if docs:
            corpus = corpus[:docs]
        qrels = read_qrels(folder / "qrels.tsv")
        owner, _ = get_user_model().objects.get_or_create(username=user, defaults={"email": f"{user}@localhost"})
        if loaded_only:
            loaded = set(Memory.objects.filter(owner=owner).values_list("metadata__beirId", flat=True))
            corpus = [doc for doc in corpus if doc["_id"] in loaded]
        doc_ids = {doc["_id"] for doc in corpus}
        # A query counts when one of its judged documents is loaded (all of them with --loaded-only, so a
        # missing document does not count against the ranking).
        all_queries = [
            q
            for q in read_jsonl(folder / "queries.jsonl")
            if q["_id"] in qrels
            and (set(qrels[q["_id"]]) <= doc_ids if loaded_only else set(qrels[q["_id"]]) & doc_ids)
        ]
        if queries:
            all_queries = all_queries[:queries]

        ingest_s = 0.0 if loaded_only else self._load(owner, corpus, reload)

        memory_doc = dict(Memory.objects.filter(owner=owner).values_list("pk", "metadata__beirId"))
        embedding.embed_query("warm-up")
        # Ranking quality without the floor (min_score=0: every candidate), then what an API caller
        # asking for 10 results sees: fewer candidates, and the relevance floor on.
        variants = {"hybrid": None, "vector_only": (1.0, 0.0), "metadata_only": (0.0, 1.0)}
        totals = {name: {"ndcg": 0.0, "recall": 0.0} for name in [*variants, "hybrid_limit_10"]}
        relevant_scores: list[float] = []
        relevant_hidden = 0
        floored_relevant = empty = 0
        recorder = ScoreRecorder(scores, data_set="scifact")
        started = time.perf_counter()
        for q in all_queries:
            vector = embedding.embed_query(q["text"])
            for name, weights in variants.items():
                response = hybrid_search(
                    owner.pk,
                    q["text"][:2000],
                    limit=100,
                    group_by="memory",
                    query_vector=vector,
                    weights=weights,
                    min_score=0.0,
                )
                ranked = [memory_doc[r.memory_id] for r in response.results]
                totals[name]["ndcg"] += ndcg_at(ranked, qrels[q["_id"]], 10)
                totals[name]["recall"] += recall_at(ranked, qrels[q["_id"]], 100)
                if name == "hybrid":
                    recorder.record(
                        owner=owner,
                        query_id=q["_id"],
                        query_type="claim",
                        text=q["text"],
                        qvec=vector,
                        results=response.results,
                        grades=[qrels[q["_id"]].get(memory_doc[r.memory_id], 0) for r in response.results],
                    )
                    relevant = [r for r in response.results[:10] if memory_doc[r.memory_id] in qrels[q["_id"]]]
                    relevant_scores += [r.hybrid_score for r in relevant]
                    relevant_hidden += sum(
                        1 for r in relevant if (not r.good_match if floor is None else r.hybrid_score < floor)
                    )
            response = hybrid_search(
                owner.pk, q["text"][:2000], limit=10, group_by="memory", query_vector=vector, min_score=floor
            )
            ranked = [memory_doc[r.memory_id] for r in response.results]
            totals["hybrid_limit_10"]["ndcg"] += ndcg_at(ranked, qrels[q["_id"]], 10)
            empty += not ranked
        recorder.close()
        floored_relevant = relevant_hidden
        search_s = time.perf_counter() - started
        n = max(len(all_queries), 1)
        result = {
            "ndcg@10": round(totals["hybrid"]["ndcg"] / n, 4),
            "recall@100": round(totals["hybrid"]["recall"] / n, 4),
            "vector_only_ndcg@10": round(totals["vector_only"]["ndcg"] / n, 4),
            "metadata_only_ndcg@10": round(totals["metadata_only"]["ndcg"] / n, 4),
            "ndcg@10_at_limit_10": round(totals["hybrid_limit_10"]["ndcg"] / n, 4),
            "floor": relevance.describe() if floor is None else f"hybridScore >= {floor:.2f}",
            "lexical_form": scoring.LEXICAL_FORM,
            "vector_search": vector_search_option.used_for(owner.pk),
            "empty_at_limit_10": empty,
            # Relevant documents in the unfloored top 10 that the floor would hide, and their scores.
            "relevant_in_top10_below_floor": floored_relevant,
            "relevant_in_top10": len(relevant_scores),
            "relevant_score_quantiles": [
                round(sorted(relevant_scores)[int(p * (len(relevant_scores) - 1))], 3) for p in (0.01, 0.05, 0.1, 0.5)
            ]
            if relevant_scores
            else [],
            "queries": len(all_queries),
            "docs": len(corpus),
            "ingest_s": round(ingest_s, 1),
            "search_ms_per_query": round(search_s / n / (len(variants) + 1) * 1000, 1),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
        self.stdout.write(json.dumps(result))

    def _load(self, owner, corpus: list[dict], reload: bool) -> float:
        if reload:
            Memory.objects.filter(owner=owner).delete()
        loaded = set(Memory.objects.filter(owner=owner).values_list("metadata__beirId", flat=True))
        missing = [doc for doc in corpus if doc["_id"] not in loaded]
        started = time.perf_counter()
        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            memory_create_many(
                owner=owner,
                items=[
                    MemoryInput(
                        title=(doc.get("title") or doc["_id"])[:500],
                        content=f"{doc.get('title', '')}\n\n{doc['text']}".strip(),
                        metadata={"beirId": doc["_id"]},
                    )
                    for doc in batch
                ],
            )
            self.stderr.write(f"\ringested {start + len(batch)}/{len(missing)}", ending="")
        if missing:
            self.stderr.write("")
        return time.perf_counter() - started
