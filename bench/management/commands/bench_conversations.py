"""Benchmark: recall over long conversations (LoCoMo, snap-research/locomo), each turn a chat memory.

The data set is not part of this repository (its own carries no licence): pass
`--data` a `locomo10.json` (a list of samples) or a folder of one sample per JSON file (the
`data/multimodal_dialog/locomo10_v2/` folder of the repository's `data/locomo10.zip`).

Each conversation is loaded into its own bench user (one person's chat history): every turn becomes
a chat memory, "Speaker: text", with "[shares a photo of …]" when the turn shared an image (the
data set's caption of it), through memory_create_many with source=chat. Every question of
categories 1–4 (single-hop, multi-hop, temporal, open-domain; category 5 asks about things never
said and has no evidence) is searched the way an API caller does, one result per memory, and
judged by its evidence turns. The last line is JSON:

    turn_r@5, turn_r@10     mean share of a question's evidence turns among its first 5 / 10 results
    session_r@5             mean share of the evidence's sessions that some of the first 5 results are from
    *_floored               the same with the relevance floor on (what a caller sees by default)
    by_category             turn_r@5 per question category
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from bench.scores import ScoreRecorder
from memories import embedding, search
from memories.models import Memory, Source
from memories.search import relevance
from memories.services import MemoryInput, memory_create_many
from memories.services.chat import _first_words

BENCH_USER = "bench-conversations"
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
_DIA_ID = re.compile(r"D(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


def read_samples(path: Path) -> list[dict]:
    """The samples of a locomo10.json, or of a folder of one sample per JSON file."""
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise CommandError(f"no .json files in {path}")
        samples = []
        for file in files:
            sample = json.loads(file.read_text(encoding="utf-8"))
            samples.append({"sample_id": file.stem, "conversation": sample, "qa": sample.get("qa", [])})
        return samples
    if not path.exists():
        raise CommandError(f"{path} does not exist")
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        {"sample_id": str(s.get("sample_id", i)), "conversation": s["conversation"], "qa": s.get("qa", [])}
        for i, s in enumerate(data)
    ]


def turns(conversation: dict) -> list[dict]:
    """Every turn of the conversation, in order: {"dia_id", "session", "content"}."""
    out = []
    sessions = sorted(
        (int(m.group(1)), key) for key in conversation if (m := _SESSION.fullmatch(key)) and conversation[key]
    )
    for number, key in sessions:
        for turn in conversation[key]:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [shares {turn['blip_caption']}]"
            out.append({"dia_id": turn["dia_id"], "session": number, "content": content})
    return out


def evidence(qa: dict) -> set[str]:
    """The evidence turn ids of a question ("D1:3"; some lists hold "D8:6; D9:17" in one string)."""
    return {f"D{a}:{b}" for item in qa.get("evidence", ()) for a, b in _DIA_ID.findall(str(item))}


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":")[0])


class Command(BaseCommand):
    help = "turn R@5/R@10 and session R@5 of search over LoCoMo conversations, each turn a chat memory."

    def add_arguments(self, parser):
        parser.add_argument("--data", required=True, help="locomo10.json, or a folder of one sample per .json")
        parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations (0: all)")
        parser.add_argument("--questions", type=int, default=0, help="only the first N questions of each (0: all)")
        parser.add_argument("--reload", action="store_true", help="store the conversations again")
        parser.add_argument("--min-score", type=float, default=None, help="floor (default: the setting)")
        parser.add_argument("--scores", default=None, help="write per-query scores (JSONL) for bench_calibrate")

    def handle(self, *args, data, conversations, questions, reload, min_score, scores, **options):
        samples = read_samples(Path(data))
        if conversations:
            samples = samples[:conversations]
        recorder = ScoreRecorder(scores, data_set="locomo")
        embedding.embed_query("warm-up")
        judged: list[dict] = []
        stored = 0
        started = time.perf_counter()
        for sample in samples:
            owner, by_memory, count = self._load(sample, reload=reload)
            stored += count
            asked = [qa for qa in sample["qa"] if qa.get("category") in CATEGORIES and evidence(qa)]
            if questions:
                asked = asked[:questions]
            for number, qa in enumerate(asked):
                judged.append(
                    self._judge(
                        owner, qa, by_memory, recorder, query_id=f"{sample['sample_id']}-{number}", floor=min_score
                    )
                )
        recorder.close()
        self.stdout.write(json.dumps(report(judged, turns_stored=stored, seconds=time.perf_counter() - started)))

    def _load(self, sample: dict, *, reload: bool) -> tuple:
        """The sample's bench user and {memory pk: dia_id}, storing its turns when they are not there."""
        username = f"{BENCH_USER}-{sample['sample_id']}"[:150]
        owner, _ = get_user_model().objects.get_or_create(
            username=username, defaults={"email": f"{username}@localhost"}
        )
        wanted = turns(sample["conversation"])
        existing = dict(Memory.objects.filter(owner=owner).values_list("pk", "metadata__diaId"))
        if reload or sorted(existing.values()) != sorted(t["dia_id"] for t in wanted):
            Memory.objects.filter(owner=owner).delete()
            existing = {}
            for start in range(0, len(wanted), 128):
                batch = wanted[start : start + 128]
                memories = memory_create_many(
                    owner=owner,
                    items=[
                        MemoryInput(
                            title=_first_words(t["content"]),
                            content=t["content"],
                            source=Source.CHAT,
                            # The memory service marks the turns that ask something, as for any chat message.
                            metadata={"diaId": t["dia_id"], "session": t["session"]},
                        )
                        for t in batch
                    ],
                )
                existing.update({m.pk: t["dia_id"] for m, t in zip(memories, batch, strict=True)})
            self.stderr.write(f"stored {len(wanted)} turns of conversation {sample['sample_id']}")
        return owner, existing, len(wanted)

    def _judge(self, owner, qa: dict, by_memory: dict, recorder: ScoreRecorder, *, query_id: str, floor) -> dict:
        wanted = evidence(qa)
        question = str(qa["question"])[: search.MAX_QUERY_CHARS]
        qvec = embedding.embed_query(question)
        response = search.hybrid_search(
            owner.pk, question, limit=100, group_by="memory", query_vector=qvec, min_score=0.0
        )
        ranked = [by_memory.get(r.memory_id, "") for r in response.results]
        recorder.record(
            owner=owner,
            query_id=query_id,
            query_type=CATEGORIES[qa["category"]],
            text=question,
            qvec=qvec,
            results=response.results,
            grades=[1 if dia in wanted else 0 for dia in ranked],
        )
        floored = search.hybrid_search(
            owner.pk, question, limit=10, group_by="memory", query_vector=qvec, min_score=floor
        )
        ranked_floored = [by_memory.get(r.memory_id, "") for r in floored.results]
        return {"category": qa["category"], "evidence": wanted, "ranked": ranked, "floored": ranked_floored}


def _turn_recall(ranked: list[str], wanted: set[str], k: int) -> float:
    return len(set(ranked[:k]) & wanted) / len(wanted)


def _session_recall(ranked: list[str], wanted: set[str], k: int) -> float:
    sessions = {session_of(d) for d in wanted}
    found = {session_of(d) for d in ranked[:k] if d}
    return len(sessions & found) / len(sessions)


def report(judged: list[dict], *, turns_stored: int, seconds: float) -> dict:
    """The figures over the judged questions (see the module docstring)."""

    def mean(values) -> float:
        values = list(values)
        return round(sum(values) / max(len(values), 1), 4)

    by_category = {
        name: mean(_turn_recall(j["ranked"], j["evidence"], 5) for j in judged if j["category"] == number)
        for number, name in CATEGORIES.items()
        if any(j["category"] == number for j in judged)
    }
    return {
        "turn_r@5": mean(_turn_recall(j["ranked"], j["evidence"], 5) for j in judged),
        "turn_r@10": mean(_turn_recall(j["ranked"], j["evidence"], 10) for j in judged),
        "session_r@5": mean(_session_recall(j["ranked"], j["evidence"], 5) for j in judged),
        "turn_r@5_floored": mean(_turn_recall(j["floored"], j["evidence"], 5) for j in judged),
        "turn_r@10_floored": mean(_turn_recall(j["floored"], j["evidence"], 10) for j in judged),
        "session_r@5_floored": mean(_session_recall(j["floored"], j["evidence"], 5) for j in judged),
        "empty_floored": sum(1 for j in judged if not j["floored"]),
        "by_category": by_category,
        "questions": len(judged),
        "turns": turns_stored,
        "seconds": round(seconds, 1),
        "floor": relevance.describe(),
    }
