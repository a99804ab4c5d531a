"""Benchmark: retrieval options for meaning over wording, each measured on several data sets.

Options, each a change to how a query is searched (the collections stay as loaded):

    baseline     the query as it is
    statement    a second embedding of the query rewritten as a statement ("when does my group
                 practise" -> "my group practise"), averaged with the query's own
    prf          pseudo-relevance feedback on the lexical side: the query plus the five terms with
                 the highest tf·idf in its first three results
    prf_vector   the query's embedding moved toward the mean of its first three results' embeddings
                 (Rocchio on the vector side)

Sets: the paraphrase queries of both personal collections (top-1), the LoCoMo conversations
loaded by bench_conversations (turn R@5), SciFact loaded by bench_retrieval (nDCG@10). It loads the
personal collections itself; run bench_conversations and bench_retrieval first. The last line is
JSON: {option: {set: figure}}.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection

from bench.datasets import read_jsonl, read_qrels
from bench.management.commands import bench_conversations, bench_personal
from memories import embedding, search
from memories.models import Memory, MemoryChunk

OPTIONS = ("baseline", "statement", "prf", "prf_vector")

_LEAD = re.compile(
    r"^\W*(?:(?:what|when|where|who|which|why|how)(?:'s|\s+(?:is|are|was|were|do|does|did|much|many|long|often|"
    r"old|far))*|(?:do|does|did|is|are|was|were|can|could|should|will|would|has|have|had))\s+",
    re.IGNORECASE,
)


def as_statement(query: str) -> str:
    """The query without its question words and question mark ("" when it is not a question)."""
    stripped = _LEAD.sub("", query).rstrip(" ?")
    return stripped if stripped != query.rstrip(" ?") or query.rstrip().endswith("?") else ""


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / (np.linalg.norm(vector) or 1.0)


def _top_terms(owner_id: int, chunk_ids: list[int], exclude: set[str], count: int = 5) -> list[str]:
    """The terms with the highest tf·idf across these chunks, not among `exclude`."""
    if not chunk_ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.lexeme, sum(t.tf), max(s.df), (SELECT chunk_count FROM memories_corpusstat WHERE owner_id = %s) "
            "FROM memories_chunkterm t JOIN memories_termstat s ON s.owner_id = t.owner_id AND s.lexeme = t.lexeme "
            "WHERE t.chunk_id = ANY(%s) GROUP BY t.lexeme",
            [owner_id, chunk_ids],
        )
        rows = cursor.fetchall()
    scored = Counter()
    for lexeme, tf, df, n in rows:
        if lexeme in exclude or df <= 1 or len(lexeme) < 3 or lexeme.isdigit():
            continue
        scored[lexeme] = float(tf) * math.log(1 + (n - df + 0.5) / (df + 0.5))
    return [term for term, _ in scored.most_common(count)]


def ranked(owner_id: int, query: str, option: str, *, limit: int) -> list:
    """The query's results, one per memory, searched with the option."""
    query = query[: search.MAX_QUERY_CHARS]
    qvec = embedding.embed_query(query)
    if option == "statement" and (statement := as_statement(query)):
        qvec = _unit(qvec + embedding.embed_query(statement))
    first = search.hybrid_search(owner_id, query, limit=limit, group_by="memory", query_vector=qvec, min_score=0.0)
    if option not in ("prf", "prf_vector") or not first.results:
        return first.results
    top = [r.chunk_id for r in first.results[:3]]
    if option == "prf":
        terms = _top_terms(owner_id, top, set(first.query_terms))
        expanded = f"{query} {' '.join(terms)}"[: search.MAX_QUERY_CHARS]
        return search.hybrid_search(
            owner_id, expanded, limit=limit, group_by="memory", query_vector=qvec, min_score=0.0
        ).results
    vectors = np.asarray(
        [
            np.asarray(v, dtype=np.float32)
            for v in MemoryChunk.objects.filter(pk__in=top).values_list("embedding", flat=True)
        ]
    )
    moved = _unit(qvec + 0.5 * _unit(vectors.mean(axis=0)))
    return search.hybrid_search(
        owner_id, query, limit=limit, group_by="memory", query_vector=moved, min_score=0.0
    ).results


class Command(BaseCommand):
    help = "Paraphrase top-1, LoCoMo turn R@5 and SciFact nDCG@10 for each meaning-over-wording option."

    def add_arguments(self, parser):
        parser.add_argument("--scifact", default=None, help="the SciFact folder (loaded by bench_retrieval)")
        parser.add_argument("--scifact-queries", type=int, default=100)
        parser.add_argument("--locomo", default=None, help="the LoCoMo data (loaded by bench_conversations)")
        parser.add_argument("--conversations", type=int, default=3)
        parser.add_argument("--options", default=",".join(OPTIONS))

    def handle(self, *args, scifact, scifact_queries, locomo, conversations, options, **kw):
        embedding.embed_query("warm-up")
        chosen = [o for o in options.split(",") if o]
        users = get_user_model().objects
        personal = []
        for name in bench_personal.SETS:
            folder = bench_personal.DATA / name
            username = bench_personal.BENCH_USER if name == "personal" else f"{bench_personal.BENCH_USER}-{name}"
            owner, _ = users.get_or_create(username=username, defaults={"email": f"{username}@localhost"})
            ids = bench_personal.load_collection(owner, read_jsonl(folder / "memories.jsonl"))
            queries = [q for q in read_jsonl(folder / "queries.jsonl") if q["type"] == "paraphrase"]
            personal.append((name, owner, ids, queries))
        conv = []
        if locomo:
            for sample in bench_conversations.read_samples(Path(locomo))[:conversations]:
                owner = users.filter(username=f"{bench_conversations.BENCH_USER}-{sample['sample_id']}").first()
                if owner is None:
                    continue
                by_memory = dict(Memory.objects.filter(owner=owner).values_list("pk", "metadata__diaId"))
                asked = [
                    qa
                    for qa in sample["qa"]
                    if qa.get("category") in bench_conversations.CATEGORIES and bench_conversations.evidence(qa)
                ]
                conv.append((owner, by_memory, asked))
        sci = None
        if scifact:
            owner = users.filter(username="bench-retrieval").first()
            qrels = read_qrels(Path(scifact) / "qrels.tsv")
            queries = [q for q in read_jsonl(Path(scifact) / "queries.jsonl") if q["_id"] in qrels][:scifact_queries]
            docs = dict(Memory.objects.filter(owner=owner).values_list("pk", "metadata__beirId"))
            sci = (owner, docs, queries, qrels)
        report = {}
        for option in chosen:
            figures = {}
            for name, owner, ids, queries in personal:
                hits = sum(
                    1
                    for q in queries
                    if (results := ranked(owner.pk, q["text"], option, limit=10))
                    and q["relevant"].get(ids.get(results[0].memory_id), 0) == 2
                )
                figures[f"{name}_paraphrase_top1"] = round(hits / max(len(queries), 1), 4)
            if conv:
                recall = []
                for owner, by_memory, asked in conv:
                    for qa in asked:
                        wanted = bench_conversations.evidence(qa)
                        top = [
                            by_memory.get(r.memory_id) for r in ranked(owner.pk, str(qa["question"]), option, limit=10)
                        ]
                        recall.append(len(set(top[:5]) & wanted) / len(wanted))
                figures["locomo_turn_r@5"] = round(sum(recall) / max(len(recall), 1), 4)
            if sci:
                owner, docs, queries, qrels = sci
                from bench.management.commands.bench_retrieval import ndcg_at

                total = sum(
                    ndcg_at(
                        [docs.get(r.memory_id) for r in ranked(owner.pk, q["text"], option, limit=100)],
                        qrels[q["_id"]],
                        10,
                    )
                    for q in queries
                )
                figures["scifact_ndcg@10"] = round(total / max(len(queries), 1), 4)
            report[option] = figures
            self.stderr.write(f"{option}: {figures}")
        self.stdout.write(json.dumps(report))
