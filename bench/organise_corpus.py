"""bench_organise's real documents: the corpus of public files, its labels, and the judgements the
figures need (a label matched to an entity, a junk tag, a link between memories that share only
common entities).

The files stay outside the repository (they belong to their projects); bench/data/organise-real/
sources.json names each one's repository, path, commit, licence, language and format, and

    python -m bench.organise_corpus /work/corpus/organise-real --mirrors /work/.mirror

rebuilds the folder from local clones (<mirrors>/<owner>+<name>/repo, bare git directories, or
--clones DIR with <owner>/<name> work trees): files/<key>.<ext> and a manifest.json that adds each
file's size and sha256. labels.json, beside sources.json, holds for each document the names that must
be entities (with the types accepted, empty for any) and the strings that must not be.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "organise-real"
SOURCES = DATA / "sources.json"
LABELS = DATA / "labels.json"

# The words of the Lorem ipsum passage and of the usual generators' vocabulary: a tag made of them is
# filler, whatever the language detector says (Latin stop-word lists miss "amet", "nulla", "morbi").
LOREM_WORDS = frozenset(
    """
    lorem ipsum dolor sit amet consectetur consectetuer adipiscing adipisicing elit sed do eiusmod tempor
    incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco
    laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse
    cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia
    deserunt mollit anim id est laborum proin mi fermentum vitae facilisis porttitor mollis quam cras
    massa venenatis faucibus libero vel euismod sollicitudin aliquam semper sapien leo ac ultrices nibh
    congue luctus scelerisque morbi nunc nec nam etiam vestibulum mauris maecenas pellentesque
    suspendisse integer praesent donec curabitur fusce vivamus phasellus quisque aenean nullam
    aliquet arcu augue bibendum blandit condimentum convallis cursus dapibus diam dictum dignissim
    dui egestas eget eleifend erat eros eu efficitur feugiat finibus gravida hendrerit iaculis
    imperdiet interdum justo lacinia lacus laoreet lectus ligula lobortis malesuada mattis metus
    molestie nisl non odio orci ornare pharetra placerat posuere pretium pulvinar purus quisque
    rhoncus risus rutrum sagittis sapien sem sodales tellus tempus tincidunt tortor tristique turpis
    ullamcorper urna varius vehicula viverra volutpat vulputate accumsan auctor commodo elementum
    fringilla habitasse habitant hac platea dictumst magnis montes nascetur parturient ridiculus mus
    netus senectus fames penatibus natoque primis cubilia curae torquent conubia nostra inceptos
    himenaeos litora sociosqu taciti class aptent per ad ante ipsum potenti neque ultricies
    consequat eleifend
    """.split()
)

# The languages whose spaCy stop-word lists judge a tag of a document of unknown language (spaCy is a dependency; each list is its
# language's function words, unlike stopwords-iso's English list, which holds "research" and "system").
STOP_WORD_LANGUAGES = ("en", "de", "fr", "es", "ru", "ja", "nl", "la", "it", "pt")

# UTF-8 read as Latin-1/cp1252, cp1251 read as cp1252 (the parser benchmark's patterns), and U+FFFD;
# in either case, since auto tags are lower case ("ã©tude").
MOJIBAKE = re.compile(
    "[ÃÂ][\u0080-\u00bf]|â€.|[ÐÑ][\u0080-\u00bf‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ]"
    r"|(?<![^\W\d_])[À-ÖØ-öø-ÿ]{4,}(?![^\W\d_])|\ufffd",
    re.IGNORECASE,
)

# A link at or above this score is "1.0" (scores are floats rounded by the link pass).
FULL_SCORE = 0.999


@dataclass
class Document:
    """One file of the corpus as its manifest names it."""

    key: str
    path: Path
    language: str
    format: str
    kind: str = ""
    source: dict = field(default_factory=dict)


@dataclass
class DocumentLabels:
    """What a person reading the document's extracted text says must and must not be an entity."""

    entities: dict[str, list[str]]  # name ("a|b": either form) -> accepted types (empty: any type)
    not_entities: list[str]


def read_sources(path: Path = SOURCES) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["documents"]


def _git_show(mirrors: Path | None, clones: Path | None, repo: str, commit: str, path: str) -> bytes:
    if clones is not None:
        work_tree = clones / repo
        command = ["git", "-C", str(work_tree), "show", f"{commit}:{path}"]
    else:
        assert mirrors is not None
        git_dir = mirrors / repo.replace("/", "+") / "repo"
        command = ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{repo}@{commit[:10]}:{path}: {done.stderr.decode(errors='replace').strip()}")
    if done.stdout.startswith(b"version https://git-lfs.github.com/spec/"):
        raise RuntimeError(f"{repo}:{path} is a Git LFS pointer, not the file")
    return done.stdout


def build(dest: Path, *, mirrors: Path | None = None, clones: Path | None = None, sources: Path = SOURCES) -> int:
    """Write the corpus folder from local clones; return the number of files written."""
    documents = read_sources(sources)
    (dest / "files").mkdir(parents=True, exist_ok=True)
    manifest = []
    for item in documents:
        data = _git_show(mirrors, clones, item["repo"], item["commit"], item["path"])
        (dest / item["file"]).write_bytes(data)
        manifest.append({**item, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    about = json.loads(sources.read_text(encoding="utf-8")).get("about", "")
    (dest / "manifest.json").write_text(
        json.dumps({"about": about, "documents": manifest}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return len(manifest)


def load_corpus(folder: Path) -> list[Document]:
    """The documents of folder/manifest.json, each file checked to exist."""
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        raise FileNotFoundError(f"{folder} has no manifest.json (build it: python -m bench.organise_corpus {folder})")
    documents = []
    for item in json.loads(manifest.read_text(encoding="utf-8"))["documents"]:
        path = folder / item["file"]
        if not path.is_file():
            raise FileNotFoundError(f"{path} is named in the manifest but missing")
        documents.append(
            Document(
                key=item["key"],
                path=path,
                language=item.get("language") or "und",
                format=item.get("format") or path.suffix.lstrip("."),
                kind=item.get("kind", ""),
                source={k: item[k] for k in ("repo", "path", "commit", "licence") if k in item},
            )
        )
    return documents


def load_labels(path: Path = LABELS) -> dict[str, DocumentLabels]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    labels = {}
    for key, item in raw["documents"].items():
        entities = item.get("entities", {})
        if isinstance(entities, list):
            entities = {name: [] for name in entities}
        labels[key] = DocumentLabels(entities=dict(entities), not_entities=list(item.get("not_entities", [])))
    return labels


def fold(name: str) -> str:
    """A name as labels and entities are compared: NFKC, case folded, one space, no edge punctuation."""
    text = unicodedata.normalize("NFKC", name).casefold().replace("’", "'").replace("‘", "'")
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" .,;:!?\"'“”«»()[]")


def match_labels(labels: DocumentLabels, entities: dict[str, tuple[str, list[str]]]) -> dict:
    """One document's labels against the entities mentioned in its memory.

    `entities` maps each entity's name to (type, aliases and key). A label matches an entity whose
    name or an alias folds to the same string (a label "a|b" matches either form: a name the text
    inflects); a must-be name counts as typed right when its accepted types are empty or hold the
    entity's type.
    """
    by_fold: dict[str, tuple[str, str]] = {}
    for name, (entity_type, aliases) in entities.items():
        for surface in (name, *aliases):
            by_fold.setdefault(fold(surface), (name, entity_type))
    found, typed_right, missing, wrong_type = [], [], [], {}
    for name, accepted in labels.entities.items():
        hit = next((by_fold[form] for form in map(fold, name.split("|")) if form in by_fold), None)
        if hit is None:
            missing.append(name)
            continue
        found.append(name)
        if not accepted or hit[1] in accepted:
            typed_right.append(name)
        else:
            wrong_type[name] = hit[1]
    junk_found = sorted(
        {f"{by_fold[fold(s)][0]} ({by_fold[fold(s)][1]})" for s in labels.not_entities if fold(s) in by_fold}
    )
    return {
        "found": found,
        "typed_right": typed_right,
        "missing": missing,
        "wrong_type": wrong_type,
        "not_entities_found": junk_found,
    }


@cache
def _stop_words(language: str) -> frozenset[str]:
    try:
        module = importlib.import_module(f"spacy.lang.{language}.stop_words")
    except ImportError:
        return frozenset()
    return frozenset(word.casefold() for word in module.STOP_WORDS)


def junk_tag(tag: str, language: str | None = None) -> str | None:
    """Why an auto tag is junk, or None: mojibake (broken decoding), filler (Lorem ipsum words), a
    stop-word (every word of the tag one) of the document's language or English, or of any benchmark
    language when the document's is not given, or no letters at all."""
    if MOJIBAKE.search(tag):
        return "mojibake"
    words = [word for word in re.split(r"[\s_\-]+", tag.casefold()) if word]
    if not words or not any(ch.isalpha() for ch in tag):
        return "no letters"
    if all(word in LOREM_WORDS for word in words):
        return "filler"
    # The document's own languages and English (the interface's): a Latin list over every document
    # would call "tam" (TAM, the Technology Acceptance Model) a stop-word.
    own = [part for part in (language or "").split("+") if part]
    for candidate in dict.fromkeys([*own, "en"] if own else STOP_WORD_LANGUAGES):
        if all(word in _stop_words(candidate) for word in words):
            return f"stop-word ({candidate})"
    return None


def common_entities(
    mentioned_by: dict[str, set[int]], memories: int, *, share: float = 0.1, at_least: int = 3
) -> set[str]:
    """Entities that say little about a pair: mentioned by at least `share` of the memories and by at
    least `at_least` of them (with 36 documents, 4 or more)."""
    floor = max(at_least, int(share * memories + 0.999))
    return {name for name, ids in mentioned_by.items() if len(ids) >= floor}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rebuild bench_organise's real-document corpus from local clones.")
    parser.add_argument("dest", type=Path, help="the corpus folder to write (files/ and manifest.json)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--mirrors", type=Path, help="folder of bare clones named <owner>+<name>/repo")
    where.add_argument("--clones", type=Path, help="folder of work trees named <owner>/<name>")
    args = parser.parse_args(argv)
    written = build(args.dest, mirrors=args.mirrors, clones=args.clones)
    sys.stdout.write(f"{written} files in {args.dest}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
