"""Benchmark: the question rule's reading of what seeks an answer (memories.search.questions.wants_answer,
what the chat answers) against messages labelled by hand.

The labels file is JSON lines: {"text": ..., "asks": true|false, "lang": "en"|...}, `asks` being
whether the message seeks an answer. Precision and recall of wants_answer() are reported per
language and overall, with the misses when asked. (Search's kind, questions.asks, further calls a
message that says more than it asks a note.) The last line is JSON. It needs no database.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories.search.questions import wants_answer


def scores(rows: list[dict]) -> dict:
    tp = sum(1 for r in rows if r["asks"] and r["predicted"])
    fp = sum(1 for r in rows if not r["asks"] and r["predicted"])
    fn = sum(1 for r in rows if r["asks"] and not r["predicted"])
    return {
        "messages": len(rows),
        "asking": tp + fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "accuracy": round(sum(1 for r in rows if r["asks"] == r["predicted"]) / len(rows), 3) if rows else None,
        "falsePositives": fp,
        "falseNegatives": fn,
    }


class Command(BaseCommand):
    help = "Precision and recall of the question rule on hand-labelled messages, per language."

    def add_arguments(self, parser):
        parser.add_argument("--labels", required=True, help="JSON lines with text, asks (bool) and lang")
        parser.add_argument("--show", action="store_true", help="print each message the rule gets wrong")

    def handle(self, *args, **options):
        path = Path(options["labels"])
        if not path.is_file():
            raise CommandError(f"no labels file at {path}")
        rows = []
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                if not isinstance(row.get("text"), str) or not isinstance(row.get("asks"), bool):
                    raise CommandError(f"line {number}: needs a text and asks true or false")
                rows.append({**row, "lang": row.get("lang") or "?", "predicted": wants_answer(row["text"])})
        by_lang: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            by_lang[row["lang"]].append(row)
        if options["show"]:
            for row in rows:
                if row["asks"] != row["predicted"]:
                    label = "missed question" if row["asks"] else "false question"
                    self.stdout.write(f"{row['lang']} {label}: {row['text'][:160]!r}")
        result = {"overall": scores(rows), "byLanguage": {lang: scores(part) for lang, part in sorted(by_lang.items())}}
        for lang, figures in result["byLanguage"].items():
            self.stdout.write(
                f"{lang}: {figures['messages']} messages, {figures['asking']} asking, "
                f"precision {figures['precision']}, recall {figures['recall']}"
            )
        self.stdout.write(json.dumps(result))
