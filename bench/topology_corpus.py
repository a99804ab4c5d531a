"""Real material for the topology page: documents nobody on the team wrote, cut out of two Universal
Dependencies treebanks (CC BY-SA 4.0). English EWT keeps its document boundaries (`# newdoc id`):
Enron mail, weblogs, newsgroup posts, reviews and answers. German GSD has none, so its news sentences
are taken in runs of RUN_SENTENCES, in order.

Rebuild with (each clone needs only its last commit):

    git clone --depth 1 https://github.com/UniversalDependencies/UD_English-EWT /tmp/ewt
    git clone --depth 1 https://github.com/UniversalDependencies/UD_German-GSD /tmp/gsd
    .venv/bin/python -m bench.topology_corpus /tmp/ewt/.git /tmp/gsd/.git /work/corpus/topology

The files stay outside the repository; `bench/data/topology/manifest.json` records where each came
from, and the browser test `tests/e2e/test_graph_real_material.py` loads them when they are there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ENGLISH = ("UniversalDependencies/UD_English-EWT", ("en_ewt-ud-dev.conllu", "en_ewt-ud-test.conllu"))
GERMAN = ("UniversalDependencies/UD_German-GSD", "de_gsd-ud-dev.conllu")
LICENCE = "CC BY-SA 4.0"
ENGLISH_DOCS = 40
GERMAN_DOCS = 10
RUN_SENTENCES = 30
# Long enough to name several things; the shortest EWT documents are one-line reviews.
MIN_CHARS = 1000


def _show(git_dir: str, path: str) -> tuple[str, str]:
    commit = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    text = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    return commit, text


def _documents(conllu: str) -> list[tuple[str, list[str]]]:
    """(document id, its sentences) in file order; sentences before any newdoc line go under ''."""
    docs: list[tuple[str, list[str]]] = []
    for line in conllu.splitlines():
        if line.startswith("# newdoc id = "):
            docs.append((line.removeprefix("# newdoc id = ").strip(), []))
        elif line.startswith("# text = "):
            if not docs:
                docs.append(("", []))
            docs[-1][1].append(line.removeprefix("# text = ").strip())
    return docs


def build(english_git: str, german_git: str, out: Path) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    manifest: list[dict] = []
    # Spread over the kinds of text: the longest documents of each kind (email, weblog, ...) in turn.
    by_kind: dict[str, list[tuple[str, str, str, str]]] = {}
    for path in ENGLISH[1]:
        commit, text = _show(english_git, path)
        for doc_id, sentences in _documents(text):
            body = "\n".join(sentences)
            if len(body) >= MIN_CHARS:
                by_kind.setdefault(doc_id.split("-")[0], []).append((doc_id, body, path, commit))
    queues = [sorted(docs, key=lambda d: -len(d[1])) for _, docs in sorted(by_kind.items())]
    picked: list[tuple[str, str, str, str]] = []
    while len(picked) < ENGLISH_DOCS and any(queues):
        for queue in queues:
            if queue and len(picked) < ENGLISH_DOCS:
                picked.append(queue.pop(0))
    for doc_id, body, path, commit in picked:
        name = f"en-{doc_id[:80]}.txt"
        (out / name).write_text(body + "\n", encoding="utf-8")
        manifest.append(
            {
                "file": name,
                "repo": ENGLISH[0],
                "path": path,
                "commit": commit,
                "document": doc_id,
                "language": "en",
                "licence": LICENCE,
            }
        )
    commit, text = _show(german_git, GERMAN[1])
    sentences = [s for _, doc in _documents(text) for s in doc]
    for i in range(GERMAN_DOCS):
        run = sentences[i * RUN_SENTENCES : (i + 1) * RUN_SENTENCES]
        name = f"de-gsd-dev-{i:02d}.txt"
        (out / name).write_text("\n".join(run) + "\n", encoding="utf-8")
        manifest.append(
            {
                "file": name,
                "repo": GERMAN[0],
                "path": GERMAN[1],
                "commit": commit,
                "document": f"sentences {i * RUN_SENTENCES + 1}-{(i + 1) * RUN_SENTENCES}",
                "language": "de",
                "licence": LICENCE,
            }
        )
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    built = build(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
    sys.stdout.write(json.dumps({"documents": len(built), "out": sys.argv[3]}) + "\n")
