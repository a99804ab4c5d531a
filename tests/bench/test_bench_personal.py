"""bench_personal on its labelled collection: every figure is a share, over the whole query set."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db


def test_bench_personal_reports_each_collection_apart(capsys):
    call_command("bench_personal")
    sets = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["sets"]
    assert set(sets) == {"personal", "personal-2"}
    for result in sets.values():
        for key in ("top1", "mrr@10", "ndcg@5", "no_answer_empty", "question_above_answer", "paraphrase_top1"):
            assert 0 <= result[key] <= 1
        assert result["queries"] >= 40 and result["no_answer_queries"] >= 10
    assert sets["personal-2"]["by_type"]["paraphrase"] is not None


def test_the_second_collection_has_enough_paraphrases_and_near_misses():
    from bench.datasets import read_jsonl
    from bench.management.commands.bench_personal import DATA

    queries = read_jsonl(DATA / "personal-2" / "queries.jsonl")
    assert sum(q["type"] == "paraphrase" for q in queries) >= 15
    assert sum(q["type"] == "no_answer" for q in queries) >= 15


def _real_corpus(folder) -> dict[str, str]:
    """A corpus folder as bench.organise_corpus builds it: files/ and a manifest naming each file."""
    files = {
        "mietvertrag": (
            "de",
            "mietvertrag.txt",
            "Kündigung des Mietvertrags\n\nHiermit kündige ich den Mietvertrag für die Wohnung in der "
            "Lindenstraße 12 in Göttingen fristgerecht zum 31. März. Die Kaution von 1.200 Euro überweisen "
            "Sie bitte auf mein Konto bei der Sparkasse Göttingen. Die Schlüssel gebe ich bei der Übergabe "
            "der Wohnung an die Hausverwaltung zurück.",
        ),
        "recette": (
            "fr",
            "recette.html",
            "<html><head><title>La tarte Tatin de ma grand-mère</title></head><body><h1>La tarte Tatin</h1>"
            "<p>Faites caraméliser le sucre et le beurre dans un moule, rangez les pommes coupées en quartiers, "
            "couvrez de pâte brisée et enfournez quarante minutes à 180 degrés. Retournez la tarte encore tiède."
            "</p></body></html>",
        ),
    }
    (folder / "files").mkdir(parents=True)
    documents = []
    for key, (language, name, text) in files.items():
        (folder / "files" / name).write_text(text, encoding="utf-8")
        documents.append({"key": key, "file": f"files/{name}", "language": language, "format": name.split(".")[-1]})
    (folder / "manifest.json").write_text(json.dumps({"documents": documents}), encoding="utf-8")
    return {key: name for key, (_, name, _) in files.items()}


def _write_jsonl(path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def test_documents_are_uploaded_from_the_corpus_and_scored_per_query_language(tmp_path, settings, capsys):
    from memories.models import Memory, UploadJob

    # The letter is over the limit, so its upload is queued as a job the command runs itself.
    settings.KYBERNESIS_ASYNC_UPLOAD_CHARS = 200
    corpus, data = tmp_path / "corpus", tmp_path / "realdocs"
    names = _real_corpus(corpus)
    data.mkdir()
    _write_jsonl(data / "memories.jsonl", [{"id": key, "type": "document", "key": key} for key in names])
    _write_jsonl(
        data / "queries.jsonl",
        [
            {
                "id": "d1",
                "type": "keyword",
                "text": "Kaution Sparkasse Göttingen",
                "relevant": {"mietvertrag": 2},
                "language": "de",
            },
            {"id": "f1", "type": "keyword", "text": "tarte Tatin pommes", "relevant": {"recette": 2}, "language": "fr"},
            # No language: counted in top1 and by_type, not in by_language.
            {"id": "x1", "type": "keyword", "text": "Lindenstraße Hausverwaltung", "relevant": {"mietvertrag": 2}},
            {"id": "z1", "type": "no_answer", "text": "Bitcoin wallet seed phrase", "language": "en"},
        ],
    )

    call_command("bench_personal", data=[str(data)], corpus=str(corpus))

    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["sets"]["realdocs"]
    assert report["top1"] == 1.0 and report["memories"] == 2
    assert report["by_language"] == {"de": 1.0, "fr": 1.0}
    assert report["queries"] == 3 and report["no_answer_queries"] == 1
    stored = {m.original.name: m for m in Memory.objects.filter(owner__username="bench-personal-realdocs")}
    assert set(stored) == set(names.values())
    assert "Kaution von 1.200 Euro" in stored["mietvertrag.txt"].content
    assert "caraméliser le sucre" in stored["recette.html"].content
    assert "<p>" not in stored["recette.html"].content
    jobs = UploadJob.objects.filter(owner__username="bench-personal-realdocs", filename="mietvertrag.txt")
    assert [(job.status, job.memory_id) for job in jobs] == [(UploadJob.Status.DONE, stored["mietvertrag.txt"].pk)]


def test_a_missing_corpus_or_file_says_how_to_build_it(tmp_path):
    data = tmp_path / "realdocs"
    data.mkdir()
    _write_jsonl(data / "memories.jsonl", [{"id": "recette", "type": "document", "key": "recette"}])
    _write_jsonl(data / "queries.jsonl", [])
    with pytest.raises(CommandError, match=r"no corpus folder .*python -m bench\.organise_corpus"):
        call_command("bench_personal", data=[str(data)], corpus=str(tmp_path / "nowhere"), stdout=StringIO())
    names = _real_corpus(tmp_path / "corpus")
    (tmp_path / "corpus" / "files" / names["recette"]).unlink()
    with pytest.raises(CommandError, match=r"missing; build it with: python -m bench\.organise_corpus"):
        call_command("bench_personal", data=[str(data)], corpus=str(tmp_path / "corpus"), stdout=StringIO())
