"""bench_parsers on a tiny corpus the test writes (a text file, a web page, two PDFs, a Word file): it
runs end to end and its JSON has the shape the lead compares before and after (never a time)."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.management.commands import bench_parsers
from tests.files import make_docx, make_encrypted_pdf, make_pdf

TEXT = "Die Stadtbibliothek öffnet am Montag um neun Uhr.\nDer Lesesaal bleibt bis zum Abend geöffnet.\n"
PAGE = (
    "<html><head><title>Harbour news</title></head><body><nav>Home | About</nav>"
    "<main><h1>Harbour news</h1><p>The ferry to the island leaves at noon every Sunday.</p></main></body></html>"
)


def _corpus(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    (files / "opening.txt").write_text(TEXT, encoding="utf-8")
    (files / "harbour.html").write_text(PAGE, encoding="utf-8")
    (files / "minutes.pdf").write_bytes(make_pdf(["Minutes of the garden committee", "Compost bins arrive in May."]))
    (files / "plan.docx").write_bytes(make_docx())
    (files / "locked.pdf").write_bytes(make_encrypted_pdf())
    manifest = [
        {
            "file": "files/opening.txt",
            "format": "txt",
            "language": "de",
            "phrases": ["öffnet am Montag um neun Uhr"],
        },
        {
            "file": "files/harbour.html",
            "format": "html",
            "language": "en",
            "title": ["Harbour news"],
            "phrases": ["The ferry to the island leaves at noon"],
        },
        {"file": "files/minutes.pdf", "format": "pdf", "language": "en", "phrases": ["Compost bins arrive in May"]},
        {"file": "files/plan.docx", "format": "docx", "language": "en", "phrases": ["Closing remarks after the table"]},
        {
            "file": "files/locked.pdf",
            "format": "pdf",
            "language": "en",
            "expect": "refuse",
            "expect_reason": "password",
        },
    ]
    (tmp_path / "manifest.json").write_text(json.dumps({"files": manifest}), encoding="utf-8")
    return tmp_path


def test_bench_parsers_measures_a_small_real_shaped_corpus(tmp_path):
    corpus = _corpus(tmp_path)
    out = io.StringIO()
    call_command("bench_parsers", corpus=str(corpus), out=str(tmp_path / "rows.json"), stdout=out)
    lines = out.getvalue().strip().splitlines()
    result = json.loads(lines[-1])
    assert len(lines) == 6  # one line per file, then the JSON

    assert result["real_corpus"] is True and result["files"] == 5 and result["normalise"] is True
    assert result["languages"] == {"en": 4, "de": 1}
    assert set(result["by_format"]) == {"txt", "html", "pdf", "docx"}
    assert set(result["by_language"]) == {"en", "de"}
    overall = result["overall"]
    assert (overall["stored"], overall["refused"], overall["crashed"], overall["timed_out"]) == (4, 1, 0, 0)
    assert (overall["expected_refusals"], overall["refused_as_expected"], overall["expected_reason_given"]) == (1, 1, 1)
    assert overall["titles_declared"] == 1 and overall["phrases"] == 4 and overall["silent_loss"] == 0
    for key in ("recall_mean", "junk_chars", "junk_by_kind", "phrase_recall", "ocr_phrase_recall", "seconds_per_page"):
        assert key in overall

    text = result["by_format"]["txt"]
    assert text["recall_mean"] == 1.0 and text["junk_chars"] == 0 and text["phrase_recall"] == 1.0
    assert result["by_format"]["docx"]["recall_mean"] > 0.9
    assert result["by_format"]["docx"]["phrase_recall"] == 1.0
    pdf = result["by_format"]["pdf"]
    assert (pdf["files"], pdf["stored"], pdf["refused"]) == (2, 1, 1)
    if shutil.which("pdftotext"):
        assert pdf["recall_mean"] > 0.9
    else:
        assert result["reference_tools"]["pdftotext"].startswith("missing") and pdf["recall_files"] == 0

    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert [row["file"] for row in rows] == ["opening.txt", "harbour.html", "minutes.pdf", "plan.docx", "locked.pdf"]
    assert rows[-1]["outcome"] == "refused" and "password" in rows[-1]["reason"]


def test_bench_parsers_without_normalising_stores_the_parsers_text(tmp_path):
    out = io.StringIO()
    call_command("bench_parsers", corpus=str(_corpus(tmp_path)), normalise=False, only="txt,docx", stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["normalise"] is False and result["files"] == 2
    assert result["by_format"]["txt"]["recall_mean"] == 1.0


def test_bench_parsers_says_to_pass_a_corpus_when_there_is_none(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_parsers, "DEFAULT_CORPUS", tmp_path / "absent")
    with pytest.raises(CommandError, match="--corpus"):
        call_command("bench_parsers", stdout=io.StringIO())
    with pytest.raises(CommandError, match=r"manifest\.json"):
        call_command("bench_parsers", corpus=str(tmp_path), stdout=io.StringIO())
