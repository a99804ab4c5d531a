"""bench_organise on its labelled set: every figure is a share, and the whole set is stored."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError


@pytest.mark.django_db(transaction=True)
def test_bench_organise_scores_the_labelled_set():
    out = StringIO()
    call_command("bench_organise", stdout=out)

    result = json.loads(out.getvalue().strip().splitlines()[-1])
    for key in ("entity_type_accuracy", "non_person_as_person", "link_pair_recall", "link_precision", "tag_precision"):
        assert 0.0 <= result[key] <= 1.0
    assert result["memories"] == 43


def _real_corpus(folder, labels: dict) -> None:
    (folder / "files").mkdir(parents=True)
    texts = {
        "berlin": (
            "de",
            "Berlin und Hamburg\n\nDie Stadt Berlin liegt an der Spree. Angela Merkel wohnte in Berlin, "
            "und Olaf Scholz war Bürgermeister von Hamburg. Die Deutsche Bahn fährt von Berlin nach Hamburg.",
        ),
        "paper": (
            "en",
            "Trace trees\n\nAndreas Gal and Brendan Eich built TraceMonkey at Mozilla. Figure 1 shows the loop. "
            "TraceMonkey compiles JavaScript; see Figure 2 for the speed-up on the SunSpider benchmark.",
        ),
    }
    texts["empty"] = ("en", "")  # refused by the upload, reported, not a crash
    documents = []
    for key, (language, text) in texts.items():
        (folder / "files" / f"{key}.txt").write_text(text, encoding="utf-8")
        documents.append({"key": key, "file": f"files/{key}.txt", "language": language, "format": "txt"})
    (folder / "manifest.json").write_text(json.dumps({"documents": documents}), encoding="utf-8")
    (folder / "labels.json").write_text(json.dumps({"documents": labels}), encoding="utf-8")


@pytest.mark.django_db(transaction=True)
def test_bench_organise_real_uploads_each_document_and_scores_its_labels(tmp_path):
    labels = {
        "berlin": {"entities": {"Berlin": ["location"], "Hamburg": ["location"]}, "not_entities": ["Die", "und"]},
        "paper": {
            "entities": {"Andreas Gal": ["person"], "TraceMonkey": [], "Mozilla": ["organization"]},
            "not_entities": ["Figure", "Figure 1"],
        },
    }
    _real_corpus(tmp_path, labels)
    out = StringIO()
    call_command("bench_organise", real=str(tmp_path), real_only=True, stdout=out)  # DIR/labels.json
    real = json.loads(out.getvalue().strip().splitlines()[-1])["real"]
    assert (real["documents"], real["stored"], list(real["refused"])) == (3, 2, ["empty"])
    assert "empty" in real["refused"]["empty"]
    assert real["names_labelled"] == 5 and real["documents_labelled"] == 2
    for key in ("entity_recall", "entity_precision"):
        assert 0.0 <= real[key] <= 1.0
    found = sum(int(row["recall"].split("/")[0]) for row in real["per_document"].values())
    assert real["entity_recall"] == round(found / 5, 3)
    assert real["not_entities_found_count"] == len(real["not_entities_found"])
    assert real["entities_per_document"]["max"] >= real["entities_per_document"]["mean"] > 0
    assert real["junk_tags_count"] == len(real["junk_tags"])
    assert set(real["by_language"]) == {"de", "en"}
    assert get_user_model().objects.filter(username__startswith="bench-organise-real-").count() == 0


@pytest.mark.django_db
def test_bench_organise_real_refuses_a_folder_without_a_manifest_or_labels_of_other_documents(tmp_path):
    with pytest.raises(CommandError, match=r"no manifest\.json"):
        call_command("bench_organise", real=str(tmp_path), real_only=True, stdout=StringIO())
    _real_corpus(tmp_path, {"elsewhere": {"entities": {}, "not_entities": []}})
    with pytest.raises(CommandError, match="not in"):
        call_command(
            "bench_organise",
            real=str(tmp_path),
            real_labels=str(tmp_path / "labels.json"),
            real_only=True,
            stdout=StringIO(),
        )
    with pytest.raises(CommandError, match="--real-only needs --real"):
        call_command("bench_organise", real_only=True, stdout=StringIO())
