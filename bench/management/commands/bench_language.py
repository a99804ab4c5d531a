"""Benchmark: language detection and auto tags on real text in many languages.

Detection: the corpus of bench.language_corpus (UDHR paragraphs, Django's translated messages as
short lines, talon's e-mails, and mixed documents made of real paragraphs), each text labelled with
its language. Reports accuracy and the share left unknown per kind and per language, the languages
confused, each chunk's language in the mixed documents (a chunk is labelled with the language that
covers most of its characters), and the milliseconds a text.

Tags (with `--real DIR`, a corpus of real documents with manifest.json, e.g. the organise-real
corpus): each document's text as the parsers extract it (pages needing OCR left out), its detected
language against the manifest's, and its auto tags judged for junk by rules independent of the
tagger's own lists: a word that is a stop-word in spaCy's list for the document's language or for
English, a tag made only of Lorem ipsum words (outside Latin), mojibake, or a run of a script written
without spaces longer than a word can be (12 characters). `--before FILE` reads the tags another
build gave the same documents ({"key": [tags]}) and judges them too, for a before/after in one run;
`--dump-tags FILE` writes this build's tags in that form.

`--build --udhr GITDIR --talon GITDIR` rebuilds the detection corpus first. The last line is JSON.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from importlib import import_module
from pathlib import Path

import django
from django.core.management.base import BaseCommand, CommandError

from bench import language_corpus
from core.language import LOREM_WORDS, detect_language, warm_up
from memories.auto_tags import auto_tags_for, mojibake
from memories.chunking import chunk_text

DEFAULT_CORPUS = Path("/work/corpus/language")
DEFAULT_REAL = Path("/work/corpus/organise-real")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{13,}")
# The English words of the Lorem ipsum vocabulary are words, not filler.
_FILLER = LOREM_WORDS - {"class", "per", "leo", "dis", "sem", "non", "nam", "ante", "massa", "magna", "mus"}


def spacy_stopwords(language: str) -> frozenset[str]:
    """spaCy's stop-word list for a language (shipped with spaCy, independent of the tagger's lists)."""
    try:
        module = import_module(f"spacy.lang.{language}.stop_words")
    except ImportError:
        return frozenset()
    return frozenset(w.lower() for w in module.STOP_WORDS)


def junk_reason(tag: str, language: str) -> str | None:
    """Why a tag is junk for a document in `language`, or None when it is not."""
    words = [w for w in tag.split("-") if w]
    if not any(ch.isalpha() for ch in tag):
        return "no letters"
    if any(mojibake(w) for w in words):
        return "mojibake"
    if _UNSPACED.search(tag):
        return "unsegmented"
    if language != "la" and words and all(w in _FILLER for w in words):
        return "filler"
    stop = spacy_stopwords("en") | spacy_stopwords(language)
    if any(w in stop for w in words):
        return "stop-word"
    return None


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
        parser.add_argument("--real", type=Path, default=None, help=f"real documents, e.g. {DEFAULT_REAL}")
        parser.add_argument("--before", type=Path, default=None, help="tags of another build, to judge beside")
        parser.add_argument("--dump-tags", type=Path, default=None)
        parser.add_argument("--build", action="store_true", help="rebuild the detection corpus first")
        parser.add_argument("--udhr", type=Path, help="git directory of wooorm/udhr (with --build)")
        parser.add_argument("--talon", type=Path, help="git directory of mailgun/talon (with --build)")
        parser.add_argument("--limit", type=int, default=0, help="at most this many texts of each kind (0: all)")

    def handle(self, *args, **options):
        corpus: Path = options["corpus"]
        if options["build"]:
            if not options["udhr"] or not options["talon"]:
                raise CommandError("--build needs --udhr and --talon (git directories of the fetched repositories)")
            locale_dir = Path(django.__file__).parent / "conf" / "locale"
            language_corpus.build(udhr=options["udhr"], talon=options["talon"], django_locale=locale_dir, out=corpus)
        if not (corpus / "items.jsonl").is_file():
            raise CommandError(f"{corpus} has no items.jsonl; rebuild it with --build --udhr GITDIR --talon GITDIR")
        warm_up()
        summary = {"corpus": str(corpus), "detection": self._detection(language_corpus.load(corpus), options["limit"])}
        if options["real"]:
            summary["tags"] = self._tags(options["real"], options["before"], options["dump_tags"])
        self.stdout.write(json.dumps(summary, ensure_ascii=False))

    def _detection(self, items, limit: int) -> dict:
        by_kind: dict[str, list] = defaultdict(list)
        for item in items:
            if not limit or len(by_kind[item.kind]) < limit:
                by_kind[item.kind].append(item)
        out: dict = {}
        for kind, group in sorted(by_kind.items()):
            started = time.perf_counter()
            found = [detect_language(item.text) for item in group]
            elapsed = time.perf_counter() - started
            right = sum(f == item.language for f, item in zip(found, group, strict=True))
            unknown = sum(f == "" for f in found)
            per_language: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
            confused: Counter[str] = Counter()
            for f, item in zip(found, group, strict=True):
                row = per_language[item.language]
                row[0] += f == item.language
                row[1] += f == ""
                row[2] += 1
                if f not in (item.language, ""):
                    confused[f"{item.language}->{f}"] += 1
            out[kind] = {
                "texts": len(group),
                "accuracy": round(right / len(group), 3),
                "unknown": round(unknown / len(group), 3),
                "wrong": round((len(group) - right - unknown) / len(group), 3),
                "ms_per_text": round(1000 * elapsed / len(group), 3),
                "mean_chars": round(sum(len(item.text) for item in group) / len(group)),
                "per_language": {
                    code: {"accuracy": round(r / n, 3), "unknown": round(u / n, 3), "texts": n}
                    for code, (r, u, n) in sorted(per_language.items())
                },
                "confused": dict(confused.most_common(10)),
            }
            if kind == "mixed":
                out[kind]["chunks"] = self._mixed_chunks(group)
        return out

    def _mixed_chunks(self, group) -> dict:
        right = unknown = total = 0
        for item in group:
            for chunk in chunk_text(item.text):
                covered: Counter[str] = Counter()
                for code, start, end in item.parts:
                    covered[code] += max(0, min(end, chunk.char_end) - max(start, chunk.char_start))
                label = covered.most_common(1)[0][0]
                found = detect_language(chunk.text)
                right += found == label
                unknown += found == ""
                total += 1
        return {"chunks": total, "accuracy": round(right / total, 3), "unknown": round(unknown / total, 3)}

    def _tags(self, real: Path, before_path: Path | None, dump: Path | None) -> dict:
        from memories import parsers

        manifest = json.loads((real / "manifest.json").read_text("utf-8"))
        before = json.loads(before_path.read_text("utf-8")) if before_path else None
        rows, tags_now, detected = [], {}, Counter()
        for doc in manifest["documents"]:
            data = (real / doc["file"]).read_bytes()
            try:
                text = parsers.extract(Path(doc["file"]).name, data, defer_ocr=True).text
            except parsers.ExtractionError as exc:
                rows.append({"key": doc["key"], "error": str(exc)})
                continue
            label = doc["language"].split("+")[0]
            found = detect_language(text)
            detected["right" if found == label else f"{label}->{found or 'unknown'}"] += 1
            tags = [t["tag"] for t in auto_tags_for(source="upload", metadata={}, content=text)]
            tags_now[doc["key"]] = tags
            row = {"key": doc["key"], "language": label, "detected": found, "tags": tags}
            row["junk"] = {t: r for t in tags if (r := junk_reason(t, label))}
            if before is not None and doc["key"] in before:
                row["before"] = before[doc["key"]]
                row["junk_before"] = {t: r for t in before[doc["key"]] if (r := junk_reason(t, label))}
            rows.append(row)
        if dump:
            dump.write_text(json.dumps(tags_now, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        judged = [r for r in rows if "tags" in r]
        result = {
            "documents": len(judged),
            "detected": dict(detected),
            "language_accuracy": round(detected["right"] / max(1, len(judged)), 3),
            "tags": sum(len(r["tags"]) for r in judged),
            "junk_tags": sum(len(r["junk"]) for r in judged),
            "junk": {r["key"]: r["junk"] for r in judged if r["junk"]},
            "rows": rows,
        }
        if before is not None:
            result["tags_before"] = sum(len(r.get("before", [])) for r in judged)
            result["junk_tags_before"] = sum(len(r.get("junk_before", {})) for r in judged)
            result["junk_before"] = {r["key"]: r["junk_before"] for r in judged if r.get("junk_before")}
        return result
