"""Benchmark: extractive chat answers (memories.search.answers) on a small labelled question set.

Each memory of the set is stored for a dedicated user; for every question the answer's cited sentences
are checked for the labelled answer string. The last line is JSON.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memories.models import Memory
from memories.search import hybrid_search
from memories.search.answers import CANDIDATE_CHUNKS, answer_question
from memories.services import MemoryInput, memory_create_many

BENCH_USER = "bench-answers"
DEFAULT_DATA = Path(settings.BASE_DIR) / "tests" / "data" / "answers"


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


class Command(BaseCommand):
    help = "Share of questions whose first cited sentence (and any cited sentence) contains the labelled answer."

    def add_arguments(self, parser):
        parser.add_argument("--data", default=str(DEFAULT_DATA), help="folder with memories.jsonl and questions.jsonl")
        parser.add_argument("--user", default=BENCH_USER)
        parser.add_argument("--show", action="store_true", help="print each question with its cited sentences")

    def handle(self, *args, **options):
        data = Path(options["data"])
        if not (data / "memories.jsonl").exists() or not (data / "questions.jsonl").exists():
            raise CommandError(f"{data} needs memories.jsonl and questions.jsonl")
        notes, questions = read_jsonl(data / "memories.jsonl"), read_jsonl(data / "questions.jsonl")
        user_model = get_user_model()
        user, _ = user_model.objects.get_or_create(
            username=options["user"], defaults={"email": f"{options['user']}@example.invalid"}
        )
        Memory.objects.filter(owner=user).delete()
        stored = memory_create_many(
            owner=user,
            items=[
                MemoryInput(title=n["title"], content=n["content"], source=n.get("source", "upload")) for n in notes
            ],
        )
        chat_ids = {m.pk for m, n in zip(stored, notes, strict=True) if n.get("source") == "chat"}

        first_hits = any_hits = answered = cited_chat = 0
        started = time.perf_counter()
        for item in questions:
            answer = answer_question(user=user, question=item["q"])
            texts = [s.text for s in answer.sentences]
            want = item["answer"].lower()
            answered += bool(texts)
            first_hits += bool(texts) and want in texts[0].lower()
            any_hits += any(want in t.lower() for t in texts)
            cited_chat += sum(s.memory_id in chat_ids for s in answer.sentences)
            if options["show"]:
                mark = (
                    "✓"
                    if texts and want in texts[0].lower()
                    else ("~" if any(want in t.lower() for t in texts) else "✗")
                )
                self.stdout.write(f"{mark} {item['q']}  [{item['answer']}]")
                for s in answer.sentences:
                    self.stdout.write(f"    {s.score:.3f} {s.text}")
        elapsed = time.perf_counter() - started
        started = time.perf_counter()
        for item in questions:  # the search alone, for the share of the time the sentences add
            hybrid_search(user.pk, item["q"], limit=CANDIDATE_CHUNKS)
        search_elapsed = time.perf_counter() - started
        n = len(questions)
        result = {
            "questions": n,
            "answered": answered,
            "first_sentence_contains_answer": round(first_hits / n, 3),
            "any_cited_sentence_contains_answer": round(any_hits / n, 3),
            "chat_questions_cited": cited_chat,
            "ms_per_question": round(1000 * elapsed / n, 1),
            "search_only_ms_per_question": round(1000 * search_elapsed / n, 1),
            "answer_to_search_time_ratio": round(elapsed / search_elapsed, 2) if search_elapsed else None,
        }
        self.stdout.write(json.dumps(result))
