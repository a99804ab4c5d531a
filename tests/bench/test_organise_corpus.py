"""bench.organise_corpus: the real-document corpus's manifest and labels, and the judgements behind
bench_organise --real (a label matched to an entity, a junk tag, the common entities of a link)."""

from __future__ import annotations

import json
import subprocess

import pytest

from bench import organise_corpus as oc


def _write_corpus(folder, documents):
    (folder / "files").mkdir(parents=True)
    for item in documents:
        (folder / item["file"]).write_text("text", encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"documents": documents}), encoding="utf-8")


def test_the_checked_in_sources_and_labels_agree():
    sources = oc.read_sources()
    keys = [item["key"] for item in sources]
    assert len(keys) == len(set(keys)) >= 30
    assert {item["language"] for item in sources} >= {"en", "de", "fr", "es", "ru", "ja"}
    for item in sources:
        assert item["repo"] and len(item["commit"]) == 40 and item["licence"] and item["file"].startswith("files/")
    labels = oc.load_labels()
    assert set(labels) == set(keys)
    for key, label in labels.items():
        assert len(label.not_entities) >= 7, key
        assert not {oc.fold(name) for name in label.entities} & {oc.fold(s) for s in label.not_entities}, key
    assert sum(len(label.entities) for label in labels.values()) >= 250


def test_load_corpus_reads_the_manifest_and_refuses_a_missing_file(tmp_path):
    _write_corpus(
        tmp_path,
        [{"key": "a", "file": "files/a.txt", "language": "de", "format": "txt", "repo": "o/r", "commit": "c"}],
    )
    (document,) = oc.load_corpus(tmp_path)
    assert (document.key, document.language, document.format, document.source["repo"]) == ("a", "de", "txt", "o/r")
    (tmp_path / "files" / "a.txt").unlink()
    with pytest.raises(FileNotFoundError, match="missing"):
        oc.load_corpus(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no manifest\.json"):
        oc.load_corpus(tmp_path / "nowhere")


def test_build_copies_each_file_at_its_commit_and_records_its_digest(tmp_path):
    clone = tmp_path / "clones" / "someone" / "docs"
    clone.mkdir(parents=True)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (clone / "a.txt").write_text("first version", encoding="utf-8")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (clone / "a.txt").write_text("changed later", encoding="utf-8")
    subprocess.run([*git, "commit", "-q", "-am", "two"], check=True)
    sources = tmp_path / "sources.json"
    entry = {"key": "a", "repo": "someone/docs", "path": "a.txt", "commit": commit, "file": "files/a.txt"}
    sources.write_text(json.dumps({"about": "x", "documents": [entry]}), encoding="utf-8")

    assert oc.build(tmp_path / "corpus", clones=tmp_path / "clones", sources=sources) == 1
    assert (tmp_path / "corpus" / "files" / "a.txt").read_text(encoding="utf-8") == "first version"
    (written,) = json.loads((tmp_path / "corpus" / "manifest.json").read_text(encoding="utf-8"))["documents"]
    assert written["size"] == len("first version") and len(written["sha256"]) == 64


def test_build_refuses_a_git_lfs_pointer(tmp_path):
    clone = tmp_path / "clones" / "someone" / "docs"
    clone.mkdir(parents=True)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (clone / "a.pdf").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n")
    subprocess.run([*git, "add", "a.pdf"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    sources = tmp_path / "sources.json"
    entry = {"key": "a", "repo": "someone/docs", "path": "a.pdf", "commit": "HEAD", "file": "files/a.pdf"}
    sources.write_text(json.dumps({"documents": [entry]}), encoding="utf-8")
    with pytest.raises(RuntimeError, match="LFS pointer"):
        oc.build(tmp_path / "corpus", clones=tmp_path / "clones", sources=sources)


def test_labels_match_names_aliases_and_keys_by_folded_form():
    labels = oc.DocumentLabels(
        entities={
            "Quai d'Orsay": ["location", "organization"],
            "Brendan Eich": ["person"],
            "Россия|России": ["location"],
            "Mozilla": [],
            "Netscape": ["organization"],
        },
        not_entities=["Figure", "Item No"],
    )
    entities = {
        "Quai d’Orsay": ("organization", []),  # a typographic apostrophe
        "Eich": ("person", ["brendan eich"]),  # found by an alias
        "России": ("location", ["россии"]),
        "Mozilla Corporation": ("technology", ["mozilla"]),  # any type accepted
        "FIGURE": ("concept", []),
    }
    matched = oc.match_labels(labels, entities)
    assert matched["found"] == ["Quai d'Orsay", "Brendan Eich", "Россия|России", "Mozilla"]
    assert matched["typed_right"] == matched["found"]
    assert matched["missing"] == ["Netscape"]
    assert matched["not_entities_found"] == ["FIGURE (concept)"]


def test_a_found_name_of_another_type_is_counted_as_wrongly_typed():
    labels = oc.DocumentLabels(entities={"Laurent Fabius": ["person"]}, not_entities=[])
    matched = oc.match_labels(labels, {"Laurent Fabius": ("organization", [])})
    assert matched["found"] == ["Laurent Fabius"] and matched["typed_right"] == []
    assert matched["wrong_type"] == {"Laurent Fabius": "organization"}


@pytest.mark.parametrize(
    ("tag", "language", "reason"),
    [
        ("und", "de", "stop-word (de)"),
        ("les", "fr", "stop-word (fr)"),
        ("как", "ru", "stop-word (ru)"),
        ("und", None, "stop-word (de)"),  # a document of unknown language: every list
        ("the-and", "en", "stop-word (en)"),
        ("amet", "la", "filler"),
        ("morbi", "en", "filler"),
        ("lorem ipsum", "la", "filler"),
        ("ã©tude", "fr", "mojibake"),
        ("Êîìïàíèÿ", "ru", "mojibake"),
        ("2019", "en", "no letters"),
        ("tam", "en", None),  # TAM, a paper's subject: Latin's "tam" does not count in English
        ("javascript", "en", None),
        ("datenschutz", "de", None),
        ("renseignement", "fr", None),
        ("москва", "ru", None),
    ],
)
def test_junk_tags(tag, language, reason):
    assert oc.junk_tag(tag, language) == reason


def test_common_entities_are_those_of_a_tenth_of_the_memories_and_at_least_three():
    mentioned_by = {"USA": {1, 2, 3, 4}, "Mozilla": {1, 2, 3}, "Andreas Gal": {1, 2}}
    assert oc.common_entities(mentioned_by, 36) == {"USA"}  # 10% of 36 is 3.6: four memories
    assert oc.common_entities(mentioned_by, 10) == {"USA", "Mozilla"}  # at least three
