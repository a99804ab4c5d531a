"""Benchmark: the relevance floor, calibrated over several data sets at once.

It reads the per-query score records that bench_personal, bench_retrieval and bench_conversations
write with `--scores` (each result's scores and grade, and the query's background score), and adds
queries about things never stored: a sample of each set's queries searched in every other set's
collection (a scientific claim in a person's notes, a question about a conversation in SciFact),
where every result is unrelated by construction. Then, for each set on its own:

    reliability        for results in the first 10 of judged queries, by hybridScore band: how many,
                       and the share that is relevant (what a score means in that set)
    rule               what the rule in use (memories.search.relevance) does: relevant results of
                       the first 10 it keeps, top-1 answers it keeps, no-answer and never-stored
                       queries it leaves empty
    alternatives       the same for a constant hybridScore floor and for a floor relative to each
                       query's background score (its mean similarity to the collection)

and `calibrated`: the rule's two thresholds, from the mean over the sets (each set counts once,
whatever its size) of the balanced accuracy: the mean of the share of relevant first-10 results
kept and the share of no-answer and never-stored queries left empty. Of the thresholds within 0.01
of the best, the lowest are chosen (see `calibrate`). The last line is JSON.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from bench.scores import ScoreRecorder, background_score
from memories import embedding, search
from memories.search import relevance

BANDS = [round(i / 20, 2) for i in range(21)]  # hybridScore bands of 0.05


def read_rows(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        with Path(path).open(encoding="utf-8") as handle:
            rows += [json.loads(line) for line in handle if line.strip()]
    return rows


def judged(row: dict) -> bool:
    """A query with an answer in its collection (no-answer and never-stored queries have none)."""
    return any(result[3] > 0 for result in row["results"])


def reliability(rows: list[dict], *, column: int = 0) -> list[dict]:
    """Per score band (hybridScore, or vectorScore with column=1), the results of the first 10 of
    judged queries and the share of them that is relevant."""
    counts: dict[float, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        if not judged(row):
            continue
        for result in row["results"][:10]:
            band = min(int(max(result[column], 0.0) * 20), 19) / 20
            counts[band][0] += 1
            counts[band][1] += result[3] > 0
    return [
        {"score": band, "results": counts[band][0], "relevant_share": round(counts[band][1] / counts[band][0], 4)}
        for band in BANDS
        if counts[band][0]
    ]


def evaluate(rows: list[dict], keep) -> dict:
    """What the floor rule `keep(result, row)` does to one set's queries."""
    relevant = kept = answers = answers_kept = 0
    no_answer = no_answer_empty = never = never_empty = 0
    for row in rows:
        results = row["results"]
        first = next((r for r in results if keep(r, row)), None)  # what the floored search shows first
        if judged(row):  # a judged query whose answers are not among its candidates counts nowhere
            top = results[:10]
            relevant += sum(r[3] > 0 for r in top)
            kept += sum(r[3] > 0 and keep(r, row) for r in top)
            best = max(r[3] for r in results)
            if results[0][3] == best:
                answers += 1
                answers_kept += first is not None and first[3] == best
        elif row["type"] == "never_stored":
            never += 1
            never_empty += first is None
        elif row["type"] == "no_answer":
            no_answer += 1
            no_answer_empty += first is None
    share = lambda part, whole: round(part / whole, 4) if whole else None  # noqa: E731
    return {
        "relevant_top10_kept": share(kept, relevant),
        "top1_answers_kept": share(answers_kept, answers),
        "no_answer_empty": share(no_answer_empty, no_answer),
        "no_answer_queries": no_answer,
        "never_stored_empty": share(never_empty, never),
        "never_stored_queries": never,
    }


def rule(limits: tuple[float, float, float] | None = None):
    """The good-match rule (memories.search.relevance), with other thresholds when given."""
    return lambda result, row: relevance.passes(hybrid=result[0], vector=result[1], idf_share=result[4], limits=limits)


def constant(at: float):
    return lambda result, row: result[0] >= at


def above_background(margin: float):
    """vectorScore beats the query's background score in the collection by `margin`."""
    return lambda result, row: result[1] - row["background"] >= margin


def balanced(figures: dict) -> float:
    """The mean of the share of relevant first-10 results kept and the share of unanswerable
    (no-answer and never-stored) queries left empty."""
    empty = [figures[k] for k in ("no_answer_empty", "never_stored_empty") if figures[k] is not None]
    kept = figures["relevant_top10_kept"]
    if kept is None or not empty:
        return 0.0
    return (kept + sum(empty) / len(empty)) / 2


# Thresholds whose mean balanced accuracy is within this of the best count as equally good.
PLATEAU = 0.01


OFF = 1.01  # a hybridScore threshold no result reaches: the rule without that side


def calibrate(by_set: dict[str, list[dict]]) -> dict:
    """The rule's three thresholds, from the mean over the sets of the balanced accuracy on a grid.
    The vector threshold is the lowest whose best mean is within PLATEAU of the best of all (a floor
    should hide as few answers as it can); at it, the best hybridScore thresholds, the lowest of
    equals."""
    vectors = [v / 100 for v in range(24, 47)]
    hybrids = [h / 100 for h in range(32, 57, 4)] + [OFF]
    keywords = [0.2, 0.24, 0.28, 0.32, 0.36]
    scores = {
        (v, h, k): sum(balanced(evaluate(rows, rule((v, h, k)))) for rows in by_set.values()) / len(by_set)
        for v in vectors
        for h in hybrids
        for k in keywords
    }
    best = max(scores.values())
    by_vector = {v: max(scores[(v, h, k)] for h in hybrids for k in keywords) for v in vectors}
    vector = min(v for v in vectors if by_vector[v] >= best - PLATEAU)
    limits = min(
        ((vector, h, k) for h in hybrids for k in keywords if scores[(vector, h, k)] >= by_vector[vector] - 1e-9),
        key=lambda key: (key[2], key[1]),
    )
    return {
        "min_vector_score": limits[0],
        "min_score": limits[1],
        "min_keyword_score": limits[2],
        "mean_balanced_accuracy": round(scores[limits], 4),
        "without_the_hybrid_side": round(max(scores[(vector, OFF, k)] for k in keywords), 4),
        "best_mean_balanced_accuracy": round(best, 4),
        "best_at": list(max(scores, key=lambda k: scores[k])),
        "by_vector_score": {f"{v:.2f}": round(by_vector[v], 4) for v in vectors},
    }


class Command(BaseCommand):
    help = "Reliability curves and floor rules over the score records of several benchmarks."

    def add_arguments(self, parser):
        parser.add_argument("--scores", action="append", required=True, help="a --scores file of a benchmark")
        parser.add_argument(
            "--never-stored", type=int, default=40, help="queries of each set searched in each other set (0: none)"
        )
        parser.add_argument("--records", default=None, help="also write the never-stored records (JSONL) here")
        parser.add_argument("--seed", type=int, default=30)

    def handle(self, *args, scores, never_stored, records, seed, **options):
        rows = read_rows(scores)
        if not rows:
            raise CommandError("the score files hold no queries")
        if never_stored:
            rows += self._never_stored(rows, per_set=never_stored, seed=seed, path=records)
        by_set: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            by_set[row["set"]].append(row)
        sets = {}
        for name, set_rows in sorted(by_set.items()):
            alternatives = {f"hybridScore >= {at:.2f}": constant(at) for at in (0.28, 0.33, 0.36, 0.4)}
            alternatives |= {f"vectorScore - background >= {m:.2f}": above_background(m) for m in (0.2, 0.25, 0.3)}
            sets[name] = {
                "queries": len(set_rows),
                "reliability": reliability(set_rows),
                "vector_reliability": reliability(set_rows, column=1),
                "rule": evaluate(set_rows, rule()),
                "alternatives": {label: evaluate(set_rows, keep) for label, keep in alternatives.items()},
            }
            sets[name]["rule"]["balanced_accuracy"] = round(balanced(sets[name]["rule"]), 4)
        self.stdout.write(json.dumps({"rule": relevance.describe(), "calibrated": calibrate(by_set), "sets": sets}))

    def _never_stored(self, rows: list[dict], *, per_set: int, seed: int, path: str | None) -> list[dict]:
        """Each set's queries (a seeded sample) searched in the collections of the other sets."""
        rng = random.Random(seed)
        owners = {row["set"]: row["owner"] for row in rows}
        texts: dict[str, list[str]] = defaultdict(list)
        for row in rows:
            if judged(row):
                texts[row["set"]].append(row["text"])
        users = {u.get_username(): u for u in get_user_model().objects.filter(username__in=owners.values())}
        recorder = ScoreRecorder(path, data_set="")
        out = []
        for target, username in sorted(owners.items()):
            owner = users.get(username)
            if owner is None:
                raise CommandError(f"the bench user {username} is gone: run the benchmark of {target} again")
            for source in sorted(texts):
                if source == target or (source.startswith("personal") and target.startswith("personal")):
                    continue  # two personal collections can share a topic by chance
                for text in rng.sample(texts[source], min(per_set, len(texts[source]))):
                    qvec = embedding.embed_query(text)
                    response = search.hybrid_search(
                        owner.pk, text, limit=10, group_by="memory", query_vector=qvec, min_score=0.0
                    )
                    row = {
                        "set": target,
                        "owner": username,
                        "id": f"{source}",
                        "type": "never_stored",
                        "text": text,
                        "background": round(background_score(owner.pk, qvec), 4),
                        "results": [
                            [r.hybrid_score, r.vector_score, r.metadata_score, 0, r.parts.get("idfShare", 0.0)]
                            for r in response.results
                        ],
                    }
                    out.append(row)
                    if recorder.handle:
                        recorder.handle.write(json.dumps(row) + "\n")
        recorder.close()
        return out
