"""Parsers on real documents: what an upload stores from each file of a corpus of public documents,
measured against reference texts that other tools read.

The corpus is a directory with manifest.json (bench.parser_corpus.load_manifest) and the files it names;
nobody on the team wrote them. Each file goes through memories.parsers.extract, the call an upload makes
(and the package's OCR step, where it offers one), then, with --normalise (the default), through the
upload's own preparation (memories.services.uploads), which decides the stored title and text. Per file
and per format, language and overall:

- stored / refused, refusals counted by reason (and those naming a Python exception), expected refusals
  (password-protected files) checked for their reason; a crash (any other exception) would be a 5xx;
- recall: the share of the reference text's character 3-grams (letters and digits only, NFKC and case
  folded, counted with multiplicity) found in the stored text. Grams instead of words so that Japanese
  and Chinese need no word segmenter; letters only so that layout, line breaks, hyphenation and column
  order change only the grams at a break; counted so that one page read of many scores low. The
  reference is poppler's pdftotext for PDFs, the Office/ODF/EPUB XML text, the page's text (navigation
  included), the file decoded in its declared encoding, or a text the manifest supplies; a missing tool
  is reported and the metric skipped;
- junk characters stored: ligatures (U+FB00-FB06), C0/C1 controls other than newline and tab, U+FFFD,
  private-use characters, glyph names (/gNNN, (cid:NN), /uniXXXX), mojibake ("Ã©", "â€™", "Ð°", words
  of Latin-1 letters only such as "Êîìïàíèÿ") and hex dumps of 200 digits or more;
- titles: where the document declares one, whether the stored title equals it after NFKC, case and
  space folding (and whether the parser's own title does);
- phrases: distinctive phrases from the reference found in the stored text (for scans: OCR phrase
  recall), and for web pages boilerplate phrases that should not be;
- silent loss: stored with less than half the reference (recall < 0.5) and no notice;
- seconds per page (extraction, OCR and preparation).

The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import logging
import re
import signal
import statistics
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from unittest import mock

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import parser_corpus as pc

DEFAULT_CORPUS = Path("/work/corpus/parsers")
# Names the parsers package may give an OCR step that runs after extract (for example in the task
# worker): called with the arguments it names among extracted, data and filename, it returns the
# completed result. --ocr-hook module:function names another.
OCR_HOOK_NAMES = ("ocr_extracted", "complete_ocr", "run_ocr")


class _Timeout(BaseException):
    """Raised by the alarm inside a parser that runs too long (a BaseException, so no parser's
    `except Exception` swallows it)."""


class _Upload:
    """The part of Django's UploadedFile that the upload code reads."""

    def __init__(self, name: str, data: bytes):
        self.name = self.client_name = name
        self.size = len(data)
        self._data = data

    def read(self, size: int = -1) -> bytes:
        return self._data if size is None or size < 0 else self._data[:size]


class _Warnings(logging.Handler):
    """Counts the warnings the parsing libraries log while one file is read."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: Counter[str] = Counter()

    def emit(self, record):
        self.messages[re.sub(r"\d+", "N", record.getMessage())[:100]] += 1


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--corpus", type=Path, default=None, help=f"default: {DEFAULT_CORPUS}")
        parser.add_argument(
            "--normalise",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="store what the upload's own preparation makes of the text (default), or the parser's text",
        )
        parser.add_argument("--only", default="", help="comma-separated formats or file names to run")
        parser.add_argument("--timeout", type=int, default=300, help="seconds per file")
        parser.add_argument("--ocr-hook", default="", help="module:function of an OCR step, or 'none'")
        parser.add_argument("--out", type=Path, default=None, help="also write every file's row and the summary here")

    def handle(self, *args, **options):
        corpus = Path(options["corpus"]) if options["corpus"] else (DEFAULT_CORPUS if DEFAULT_CORPUS.is_dir() else None)
        if corpus is None:
            raise CommandError(
                f"no corpus: {DEFAULT_CORPUS} does not exist; pass --corpus DIR (a directory with manifest.json)"
            )
        if not (corpus / "manifest.json").is_file():
            raise CommandError(f"{corpus} has no manifest.json; pass --corpus DIR")
        entries = pc.load_manifest(corpus)
        only = {item.strip() for item in options["only"].split(",") if item.strip()}
        if only:
            entries = [e for e in entries if e.format in only or e.name in only]
        import memories.parsers as parsers

        ocr = self._ocr_hook(options["ocr_hook"], parsers)
        rows = []
        log_handler = _Warnings()
        root = logging.getLogger()
        root.addHandler(log_handler)
        try:
            for entry in entries:
                log_handler.messages.clear()
                row = self._run(entry, corpus, options, ocr)
                row["log_warnings"] = sum(log_handler.messages.values())
                row["log_top"] = [f"{n}x {m}" for m, n in log_handler.messages.most_common(2)]
                rows.append(row)
                self.stdout.write(_line(row))
        finally:
            root.removeHandler(log_handler)
        summary = {
            "real_corpus": True,
            "corpus": str(corpus),
            "files": len(rows),
            "normalise": options["normalise"],
            "code": _git_head(),
            "ocr_hook": getattr(ocr, "__qualname__", None),
            "reference_tools": {"pdftotext": pc.pdftotext_version() or "missing: install poppler-utils"},
            "supported_extensions": sorted(parsers.SUPPORTED_EXTENSIONS),
            "languages": dict(Counter(r["language"] for r in rows).most_common()),
            "overall": _summarise(rows),
            "by_format": {fmt: _summarise([r for r in rows if r["format"] == fmt]) for fmt in _ordered(rows, "format")},
            "by_language": {
                lang: _summarise([r for r in rows if r["language"] == lang]) for lang in _ordered(rows, "language")
            },
            "scans": _summarise([r for r in rows if r["scan"]]),
            "silent_loss_files": [r["file"] for r in rows if r["silent_loss"]],
            "crashed_files": [f"{r['file']}: {r['reason']}" for r in rows if r["outcome"] in {"crash", "timeout"}],
        }
        if options["out"]:
            Path(options["out"]).write_text(
                json.dumps({"summary": summary, "rows": rows}, ensure_ascii=False, indent=1)
            )
        self.stdout.write(json.dumps(summary, ensure_ascii=False))

    # --- one file -----------------------------------------------------------------------------

    def _run(self, entry, corpus: Path, options, ocr) -> dict:
        from memories.parsers import ExtractionError, InflateBudget, extract
        from memories.services.validation import MemoryInputError

        data = entry.path.read_bytes()
        row = {
            "file": entry.name,
            "format": entry.format,
            "language": entry.language,
            "bytes": len(data),
            "scan": entry.scan,
            "expect": entry.expect,
            "outcome": "stored",
            "stage": None,
            "reason": None,
            "status": None,
        }
        timings = {"extract": 0.0, "ocr": 0.0, "prepare": 0.0}
        extracted = title = text = None
        stage = "extract"
        started = time.perf_counter()
        try:
            with _deadline(options["timeout"]):
                extracted = extract(
                    entry.name,
                    data,
                    budget=InflateBudget(settings.KYBERNESIS_MAX_REQUEST_INFLATED_BYTES),
                    max_inflated=settings.KYBERNESIS_MAX_INFLATED_BYTES,
                )
                timings["extract"] = time.perf_counter() - started
                if ocr is not None:
                    stage, started = "ocr", time.perf_counter()
                    extracted = _call_ocr(ocr, extracted=extracted, data=data, filename=entry.name) or extracted
                    timings["ocr"] = time.perf_counter() - started
                stage, started = "prepare", time.perf_counter()
                if options["normalise"]:
                    title, text = _upload_prepare(entry.name, data, extracted)
                else:
                    title, text = extracted.title or _stem(entry.name), extracted.text
                timings["prepare"] = time.perf_counter() - started
        except (ExtractionError, MemoryInputError) as exc:
            timings[stage] = time.perf_counter() - started
            row.update(outcome="refused", stage=stage, reason=str(exc), status=getattr(exc, "status", 422))
        except _Timeout:
            timings[stage] = time.perf_counter() - started
            row.update(outcome="timeout", stage=stage, reason=f"over {options['timeout']} s")
        except Exception as exc:  # noqa: BLE001 - a crash is what the bench reports, not what stops it
            timings[stage] = time.perf_counter() - started
            row.update(outcome="crash", stage=stage, reason=f"{type(exc).__name__}: {exc}"[:300])
        metadata = getattr(extracted, "metadata", None) or {}
        notices = list(getattr(extracted, "notices", None) or []) + list(metadata.get("notices") or [])
        row.update(
            seconds={k: round(v, 4) for k, v in timings.items()},
            pages=_pages(entry, data, metadata),
            notices=notices,
            chars=len(text or ""),
        )
        reference = pc.reference_for(entry, data, corpus)
        row["reference"] = reference.tool
        row["reference_missing"] = reference.missing
        stored = text or ""
        row["recall"] = (
            _round(pc.recall(reference.text, stored)) if reference.text is not None and text is not None else None
        )
        ref_chars = pc.alnum_chars(reference.text) if reference.text else 0
        row["length_ratio"] = _round(pc.alnum_chars(stored) / ref_chars) if text is not None and ref_chars else None
        row["junk"] = pc.junk(stored)
        row["format_chars"] = len(pc.FORMAT_CHARS.findall(stored))
        row["hyphen_breaks"] = len(pc.HYPHEN_BREAK.findall(stored))
        row["title"] = title
        row["title_parser"] = getattr(extracted, "title", None)
        row["title_declared"] = bool(entry.titles)
        row["title_ok"] = pc.title_matches(title, entry.titles) if entry.titles and text is not None else None
        row["title_parser_ok"] = (
            pc.title_matches(row["title_parser"], entry.titles) if entry.titles and extracted is not None else None
        )
        row["phrases"] = len(entry.phrases)
        row["phrases_found"] = pc.phrases_found(stored, entry.phrases)
        row["absent_phrases"] = len(entry.absent_phrases)
        row["absent_found"] = pc.phrases_found(stored, entry.absent_phrases)
        expected_reason = entry.expect_reason
        row["expected_reason_given"] = (
            bool(row["reason"]) and (expected_reason is None or expected_reason.lower() in row["reason"].lower())
            if entry.expect == "refuse" and row["outcome"] == "refused"
            else None
        )
        row["silent_loss"] = bool(
            text is not None and row["recall"] is not None and row["recall"] < 0.5 and not notices
        )
        return row

    @staticmethod
    def _ocr_hook(spec: str, parsers):
        if spec == "none":
            return None
        if spec:
            module, _, name = spec.partition(":")
            return getattr(importlib.import_module(module), name)
        for name in OCR_HOOK_NAMES:
            hook = getattr(parsers, name, None)
            if callable(hook):
                return hook
        return None


# --- the upload's own preparation -------------------------------------------------------------


def _upload_prepare(name: str, data: bytes, extracted) -> tuple[str, str]:
    """(title, text) as an upload stores them: the upload's item preparation (title rule, memory
    service normalisation and checks) run on this extract result, so the file is not read twice.
    Where that code has moved or changed shape, the memory service's memory_input_prepare alone."""
    from memories.parsers import InflateBudget
    from memories.services import uploads

    prepare = getattr(uploads, "_upload_item", None)
    if (
        prepare is not None
        and callable(getattr(uploads, "extract", None))
        and len(inspect.signature(prepare).parameters) == 3
    ):
        with mock.patch.object(uploads, "extract", return_value=extracted):
            item = prepare(_Upload(name, data), [], InflateBudget(settings.KYBERNESIS_MAX_REQUEST_INFLATED_BYTES))
        if isinstance(getattr(item, "title", None), str) and isinstance(getattr(item, "content", None), str):
            return item.title, item.content
    from memories.services.memory import MemoryInput, memory_input_prepare

    item = memory_input_prepare(
        MemoryInput(title=extracted.title or _stem(name), content=extracted.text, metadata=dict(extracted.metadata)),
        index=None,
    )
    return item.title, item.content


def _call_ocr(hook, **available):
    wanted = inspect.signature(hook).parameters
    return hook(**{k: v for k, v in available.items() if k in wanted})


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name.strip(".") else name


class _deadline:
    """SIGALRM after `seconds` in the main thread (elsewhere, no limit)."""

    def __init__(self, seconds: int):
        self.seconds = seconds
        self.armed = threading.current_thread() is threading.main_thread() and seconds > 0

    def __enter__(self):
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.alarm(self.seconds)

    def __exit__(self, *exc):
        if self.armed:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, self.previous)
        return False

    @staticmethod
    def _fire(signum, frame):
        raise _Timeout()


def _pages(entry, data: bytes, metadata: dict) -> int:
    count = metadata.get("pageCount")
    if isinstance(count, int) and count > 0:
        return count
    if entry.format == "image":
        try:
            from PIL import Image

            with Image.open(entry.path) as image:
                return max(1, getattr(image, "n_frames", 1))
        except Exception:  # noqa: BLE001 - an unreadable image counts as one page
            return 1
    if entry.format.startswith("pdf"):
        try:
            import io

            from pypdf import PdfReader

            return max(1, len(PdfReader(io.BytesIO(data), strict=False).pages))
        except Exception:  # noqa: BLE001 - a PDF pypdf cannot open counts as one page
            return 1
    return 1


# --- summaries --------------------------------------------------------------------------------


def _summarise(rows: list[dict]) -> dict:
    stored = [r for r in rows if r["outcome"] == "stored"]
    refused = [r for r in rows if r["outcome"] == "refused"]
    with_ref = [r["recall"] for r in stored if r["recall"] is not None]
    # Every file that should be stored and has a reference, a refused one counting as nothing read.
    should = [
        (r["recall"] or 0.0) if r["outcome"] == "stored" else 0.0
        for r in rows
        if r["expect"] == "store" and r["reference_missing"] is None
    ]
    junk = Counter()
    for r in stored:
        junk.update({k: v for k, v in r["junk"].items() if k != "total"})
    titled = [r for r in rows if r["title_declared"]]
    scans = [r for r in rows if r["scan"]]
    seconds = sum(sum(r["seconds"].values()) for r in stored)
    pages = sum(r["pages"] for r in stored)
    ocr_seconds = sum(r["seconds"]["ocr"] + r["seconds"]["extract"] for r in stored if r["scan"])
    ocr_pages = sum(r["pages"] for r in stored if r["scan"])
    return {
        "files": len(rows),
        "stored": len(stored),
        "refused": len(refused),
        "crashed": sum(r["outcome"] == "crash" for r in rows),
        "timed_out": sum(r["outcome"] == "timeout" for r in rows),
        "refusal_reasons": dict(Counter(_reason(r["reason"]) for r in refused).most_common()),
        "reasons_naming_exceptions": sum(bool(pc.EXCEPTION_NAME.search(r["reason"])) for r in refused),
        "expected_refusals": sum(r["expect"] == "refuse" for r in rows),
        "refused_as_expected": sum(r["expect"] == "refuse" and r["outcome"] == "refused" for r in rows),
        "expected_reason_given": sum(bool(r["expected_reason_given"]) for r in rows),
        "wrongly_refused": sum(r["expect"] == "store" and r["outcome"] != "stored" for r in rows),
        "recall_files": len(with_ref),
        "recall_mean": _round(statistics.fmean(with_ref)) if with_ref else None,
        "recall_median": _round(statistics.median(with_ref)) if with_ref else None,
        "recall_min": _round(min(with_ref)) if with_ref else None,
        "recall_mean_incl_refused": _round(statistics.fmean(should)) if should else None,
        "no_reference": sum(r["reference_missing"] is not None for r in rows),
        "junk_chars": sum(junk.values()),
        "junk_by_kind": {k: v for k, v in junk.items() if v},
        "files_with_junk": sum(r["junk"]["total"] > 0 for r in stored),
        "format_chars": sum(r["format_chars"] for r in stored),
        "hyphen_breaks": sum(r["hyphen_breaks"] for r in stored),
        "titles_declared": len(titled),
        "titles_from_document": sum(bool(r["title_ok"]) for r in titled),
        "titles_from_parser": sum(bool(r["title_parser_ok"]) for r in titled),
        "phrases": sum(r["phrases"] for r in rows),
        "phrases_found": sum(r["phrases_found"] for r in rows),
        "phrase_recall": _share(sum(r["phrases_found"] for r in rows), sum(r["phrases"] for r in rows)),
        "ocr_phrases": sum(r["phrases"] for r in scans),
        "ocr_phrases_found": sum(r["phrases_found"] for r in scans),
        "ocr_phrase_recall": _share(sum(r["phrases_found"] for r in scans), sum(r["phrases"] for r in scans)),
        "scans_refused_no_text": sum(r["outcome"] == "refused" and "no extractable text" in r["reason"] for r in scans),
        "boilerplate_phrases": sum(r["absent_phrases"] for r in rows),
        "boilerplate_kept": sum(r["absent_found"] for r in rows),
        "silent_loss": sum(r["silent_loss"] for r in rows),
        "with_notice": sum(bool(r["notices"]) for r in stored),
        "log_warnings": sum(r.get("log_warnings", 0) for r in rows),
        "seconds": round(seconds, 3),
        "pages": pages,
        "seconds_per_page": _round(seconds / pages) if pages else None,
        "ocr_seconds_per_page": _round(ocr_seconds / ocr_pages) if ocr_pages else None,
    }


def _reason(reason: str) -> str:
    """A refusal's message with its numbers taken out, so the same reason counts once."""
    return re.sub(r"\d[\d,.]*", "N", reason)[:140]


def _ordered(rows: list[dict], key: str) -> list[str]:
    return [value for value, _ in Counter(r[key] for r in rows).most_common()]


def _share(part: int, whole: int) -> float | None:
    return _round(part / whole) if whole else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _line(row: dict) -> str:
    recall = "-" if row["recall"] is None else f"{row['recall']:.2f}"
    title = {None: "", True: " title=ok", False: " title=no"}[row["title_ok"]]
    reason = f"  [{row['reason'][:90]}]" if row["reason"] else ""
    return (
        f"{row['file'][:44]:44} {row['format']:9} {row['language']:3} {row['outcome']:8} "
        f"recall={recall:4} junk={row['junk']['total']:<6} phrases={row['phrases_found']}/{row['phrases']}"
        f"{title} {sum(row['seconds'].values()):.2f}s/{row['pages']}p{reason}"
    )


def _git_head() -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(settings.BASE_DIR), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None
