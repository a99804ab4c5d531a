"""Benchmark: which keyword extractor makes better auto tags, YAKE or embedding-ranked n-grams (KeyBERT-style).

Quality is judged against each document's human-written title, which states what the document is
about: `title_hit` is the share of tags whose every word (singular) appears in the title. `spread`
is the share of distinct tags among all tags given, since a tag every document gets sorts nothing.
Speed is milliseconds per document on this machine. The last line is JSON.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from bench.datasets import read_jsonl
from memories import embedding
from memories.auto_tags import _singular, content_keywords, keyword_tag

TAGS_PER_DOC = 4


def embedding_keywords(text: str, *, limit: int, diversity: float = 0.5) -> list[str]:
    """KeyBERT's method with the already-loaded model: 1-2 word candidates ranked by cosine to the
    document, then maximal marginal relevance so the tags do not repeat one idea."""
    words = re.findall(r"[\w+#.'-]+", text.lower())
    counts: Counter[str] = Counter()
    for n in (1, 2):
        for i in range(len(words) - n + 1):
            tag = keyword_tag(" ".join(words[i : i + n]))
            if tag:
                counts[tag] += 1
    candidates = [tag for tag, _ in counts.most_common(20)]
    if not candidates:
        return []
    vectors = embedding.embed_texts([text[:2000], *(c.replace("-", " ") for c in candidates)])
    doc, cand = vectors[0], vectors[1:]
    relevance = cand @ doc
    chosen: list[int] = []
    while len(chosen) < min(limit, len(candidates)):
        best, best_score = -1, -np.inf
        for i in range(len(candidates)):
            if i in chosen:
                continue
            redundancy = max((float(cand[i] @ cand[j]) for j in chosen), default=0.0)
            score = (1 - diversity) * float(relevance[i]) - diversity * redundancy
            if score > best_score:
                best, best_score = i, score
        chosen.append(best)
    return [candidates[i] for i in chosen]


def title_hit(tags: list[str], title: str) -> float:
    title_words = {_singular(w) for w in re.findall(r"[\w+#.'-]+", title.lower())}
    hits = [all(_singular(w) in title_words for w in tag.split("-")) for tag in tags]
    return sum(hits) / len(hits) if hits else 0.0


def measure(docs: list[dict], extract) -> dict:
    started = time.perf_counter()
    all_tags: list[str] = []
    hits: list[float] = []
    for doc in docs:
        tags = extract(doc["text"])
        all_tags.extend(tags)
        hits.append(title_hit(tags, doc["title"]))
    elapsed = time.perf_counter() - started
    return {
        "title_hit": round(sum(hits) / len(hits), 4),
        "spread": round(len(set(all_tags)) / max(len(all_tags), 1), 4),
        "tags_per_doc": round(len(all_tags) / len(docs), 2),
        "ms_per_doc": round(1000 * elapsed / len(docs), 2),
    }


class Command(BaseCommand):
    help = "Compare YAKE and embedding-ranked keywords as auto tags on SciFact abstracts."

    def add_arguments(self, parser):
        parser.add_argument("--data", default="../shared/bench/scifact", help="folder with corpus.jsonl")
        parser.add_argument("--docs", type=int, default=100)

    def handle(self, *args, data, docs, **options):
        corpus = Path(data) / "corpus.jsonl"
        if not corpus.exists():
            raise CommandError(f"{corpus} not found")
        if docs < 1:
            raise CommandError("--docs must be at least 1")
        sample = [d for d in read_jsonl(corpus) if d.get("text") and d.get("title")][:docs]
        embedding.get_model()
        content_keywords("warm up the extractor", limit=1)
        yake_result = measure(sample, lambda t: [i["tag"] for i in content_keywords(t, limit=TAGS_PER_DOC)])
        embed_result = measure(sample, lambda t: embedding_keywords(t, limit=TAGS_PER_DOC))
        self.stdout.write(
            json.dumps({"docs": len(sample), "yake": yake_result, "embedding": embed_result, "chosen": "yake"})
        )
