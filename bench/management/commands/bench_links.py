"""Benchmark: memory links on real documents nobody on the team wrote; last line is JSON.

SciFact's abstracts (the BEIR layout, ../shared/bench/scifact) are real scientific writing, and its
annotators, not us, said which abstracts back one claim: two abstracts cited for the same claim are a
related pair. The abstracts cited by claims that cite two or more are stored with --distractors
other abstracts (a fixed sample) for a fresh user, through the graph task as an upload is, then the
owner-wide pass of the sleep Link step.

link_pair_recall      share of the co-cited pairs that are linked
link_precision        of the links between two cited abstracts, the share that are co-cited. Abstracts
                      cited for different claims can still be related, so this is a floor
links_per_memory      links by content per memory, over all stored abstracts
links_at_one          links by content that score 1.0 without being near-duplicates (must be 0)
common_only_links     links by content whose shared names and tags are all common in the account
                      (rarity 0) and whose meaning does not carry them (must be 0)
by_shared_things      share of the links that shared rare things, not meaning, carry
"""

from __future__ import annotations

import itertools
import json
import random
import time
import uuid
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from bench.datasets import read_jsonl, read_qrels
from graph import tasks
from graph.linkrules import SEMANTIC_FLOOR
from graph.models import MemoryLink
from graph.services import graph_owner_retype, memory_links_refresh
from memories.services import MemoryInput, memory_create_many

CONTENT = ("semantic", "shared_entities", "shared_tags")


def co_cited(qrels: dict[str, dict[str, int]]) -> tuple[list[str], set[tuple[str, str]]]:
    """The abstracts cited by claims citing two or more, and the pairs cited for one claim."""
    pairs: set[tuple[str, str]] = set()
    for docs in qrels.values():
        if len(docs) > 1:
            pairs.update(tuple(sorted(pair)) for pair in itertools.combinations(docs, 2))  # type: ignore[misc]
    return sorted({doc for pair in pairs for doc in pair}), pairs


def score(*, owner, keys: dict[str, int], cited: list[str], related: set[tuple[str, str]]) -> dict:
    doc_of = {memory_id: doc for doc, memory_id in keys.items()}
    links = list(MemoryLink.objects.filter(owner=owner, reason__in=CONTENT))
    linked = {tuple(sorted((doc_of[link.source_id], doc_of[link.target_id]))) for link in links}
    cited_set = set(cited)
    among_cited = {pair for pair in linked if pair[0] in cited_set and pair[1] in cited_set}

    def common_only(link) -> bool:
        shared = [*link.details.get("entities", []), *link.details.get("tags", [])]
        weak_meaning = (link.details.get("similarity") or 0.0) < SEMANTIC_FLOOR
        return weak_meaning and all(weight <= 0 for _, weight in shared) and not link.details.get("filed")

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    return {
        "link_pair_recall": ratio(len(related & linked), len(related)),
        "link_precision": ratio(len(among_cited & related), len(among_cited)),
        "links": len(links),
        "links_per_memory": ratio(2 * len(links), len(keys)),
        "links_at_one": sum(1 for link in links if link.score >= 1.0 and not link.details.get("nearDuplicate")),
        "common_only_links": sum(1 for link in links if common_only(link)),
        "by_shared_things": ratio(sum(1 for link in links if link.reason != "semantic"), len(links)),
        "max_score": max((link.score for link in links), default=None),
        "co_cited_pairs": len(related),
        "examples": [
            f"{link.score:.2f} {doc_of[link.source_id]}~{doc_of[link.target_id]}: {link.explanation}"
            for link in sorted(links, key=lambda link: -link.score)[:8]
        ],
    }


class Command(BaseCommand):
    help = "Score memory links on SciFact abstracts against the claims that cite them together."

    def add_arguments(self, parser):
        parser.add_argument("--data", default="../shared/bench/scifact", help="a BEIR-layout SciFact folder")
        parser.add_argument("--distractors", type=int, default=240, help="other abstracts stored beside them")
        parser.add_argument("--seed", type=int, default=29)
        parser.add_argument("--keep", action="store_true", help="keep the benchmark user and its memories")

    def handle(self, *args, data: str, distractors: int, seed: int, keep: bool, **options):
        folder = Path(data)
        if not (folder / "corpus.jsonl").exists() or not (folder / "qrels.tsv").exists():
            raise CommandError(f"{folder} has no corpus.jsonl and qrels.tsv")
        if distractors < 0:
            raise CommandError("--distractors must be 0 or more")
        docs = {str(doc["_id"]): doc for doc in read_jsonl(folder / "corpus.jsonl") if doc.get("text")}
        cited, related = co_cited(read_qrels(folder / "qrels.tsv"))
        cited = [doc for doc in cited if doc in docs]
        related = {pair for pair in related if pair[0] in docs and pair[1] in docs}
        if not related:
            raise CommandError("no claim in qrels.tsv cites two abstracts of corpus.jsonl")
        others = sorted(set(docs) - set(cited))
        chosen = cited + random.Random(seed).sample(others, min(distractors, len(others)))
        owner = get_user_model().objects.create(
            username=f"bench-links-{uuid.uuid4().hex[:8]}", email="bench-links@localhost"
        )
        try:
            started = time.perf_counter()
            memories = memory_create_many(
                owner=owner,
                items=[MemoryInput(title=docs[d]["title"][:250] or d, content=docs[d]["text"]) for d in chosen],
            )
            keys = {doc: memory.pk for doc, memory in zip(chosen, memories, strict=True)}
            for start in range(0, len(memories), 20):
                tasks.extract_memories([memory.pk for memory in memories[start : start + 20]])
            graph_owner_retype(owner_id=owner.pk)
            linking = time.perf_counter()
            memory_links_refresh(owner=owner, memory_ids=list(keys.values()), expire_all=True)
            result = score(owner=owner, keys=keys, cited=cited, related=related)
            result["memories"] = len(keys)
            result["link_pass_s"] = round(time.perf_counter() - linking, 2)
            result["seconds"] = round(time.perf_counter() - started, 1)
        finally:
            if not keep:
                owner.delete()
        self.stdout.write(json.dumps(result))
