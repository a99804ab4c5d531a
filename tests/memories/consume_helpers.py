"""Files for the watched-folder tests: real text (the BEIR SciFact abstracts in tests/data, CC BY 4.0),
written as .txt, .md and PDF files, and a watcher over a test's own folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

from memories.consume.watcher import Watcher
from tests.files import make_pdf

DATA = Path(__file__).resolve().parents[1] / "data" / "scifact-mini" / "corpus.jsonl"


def abstracts() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def real_texts(count: int) -> list[tuple[str, str]]:
    """`count` distinct (name, text) pairs: each abstract whole, then its sentences one by one."""
    docs = abstracts()
    found: list[tuple[str, str]] = [(f"{d['_id']}.txt", f"{d['title']}\n\n{d['text']}") for d in docs]
    seen = {text for _, text in found}
    for d in docs:
        for i, sentence in enumerate(re.split(r"(?<=[.!?])\s+", d["text"])):
            sentence = sentence.strip()
            if len(sentence) >= 40 and sentence not in seen:
                seen.add(sentence)
                found.append((f"{d['_id']}-s{i:02d}.txt", sentence))
    if len(found) < count:
        raise AssertionError(f"only {len(found)} distinct texts in {DATA}")
    return found[:count]


def drop_files(folder: Path, count: int, *, copies: int = 0, pdfs: int = 0) -> dict[str, bytes]:
    """Write `count` files of distinct real text into folder (the first `pdfs` of them as PDFs, every
    tenth as Markdown in a subfolder), then `copies` byte-identical copies under other names."""
    written: dict[str, bytes] = {}
    for i, (name, text) in enumerate(real_texts(count)):
        if i < pdfs:
            name, data = name.replace(".txt", ".pdf"), make_pdf([_wrap(text)])
        elif i % 10 == 5:
            name, data = f"notes/{name.replace('.txt', '.md')}", f"# {name}\n\n{text}\n".encode()
        else:
            data = text.encode()
        written[name] = data
    originals = list(written.items())
    for i in range(copies):
        name, data = originals[pdfs + i]
        written[f"copy-{i:02d}-{Path(name).name}"] = data
    for name, data in written.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return written


def _wrap(text: str, width: int = 90) -> str:
    lines, line = [], ""
    for word in text.split():
        if len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join([*lines, line])


def watcher(folder: Path, user: str = "", **options) -> Watcher:
    options.setdefault("stable_s", 0)
    return Watcher(path=folder, user=user, **options)


def settle(w: Watcher, passes: int = 50) -> list:
    """Passes until nothing is left to settle; the rows filed."""
    filed = []
    for _ in range(passes):
        result = w.step()
        assert result is not None, w.error
        filed.extend(result.filed)
        if not result.busy:
            break
    return filed


def files_under(path: Path) -> list[str]:
    if not path.exists():
        return []
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() or p.is_symlink())
