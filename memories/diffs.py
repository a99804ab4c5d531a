"""Readable differences between two versions of a memory: lines, with the changed words marked.

Pure functions over plain values, so table tests pin them. A text diff is line by line (difflib), and a
line that was changed rather than added or removed shows which words changed; long unchanged runs are
folded to a few lines of context around each change.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field

CONTEXT_LINES = 2
# Word diffs of a replaced block are skipped past this many characters (difflib is quadratic at worst).
MAX_WORD_DIFF_CHARS = 20_000
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


@dataclass
class Line:
    """One row of a text diff. kind: same, added, removed or skip (folded unchanged lines, `skipped`
    of them). `parts` are (op, text) with op "same", "added" or "removed" for word marks."""

    kind: str
    old_no: int | None = None
    new_no: int | None = None
    parts: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.parts)

    def as_dict(self) -> dict:
        out: dict = {"kind": self.kind, "oldLine": self.old_no, "newLine": self.new_no, "text": self.text}
        if self.kind == "skip":
            out["skipped"] = self.skipped
        if any(op != "same" for op, _ in self.parts):
            out["parts"] = [{"op": op, "text": text} for op, text in self.parts]
        return out


def _words(old: str, new: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The old and new line as parts, with the words only one side has marked."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    old_parts: list[tuple[str, str]] = []
    new_parts: list[tuple[str, str]] = []
    opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        # A lone space between two changed words belongs to the change: "basic poll" → "small voting"
        # reads as one replaced phrase, not two.
        between = 0 < k < len(opcodes) - 1 and "".join(a[i1:i2]).isspace()
        if tag == "equal" and between:
            tag = "replace"
        if tag == "equal":
            old_parts.append(("same", "".join(a[i1:i2])))
            new_parts.append(("same", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            old_parts.append(("removed", "".join(a[i1:i2])))
        if j2 > j1:
            new_parts.append(("added", "".join(b[j1:j2])))
    return _merge(old_parts), _merge(new_parts)


def _merge(parts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    merged: list[tuple[str, str]] = []
    for op, text in parts:
        if merged and merged[-1][0] == op:
            merged[-1] = (op, merged[-1][1] + text)
        elif text:
            merged.append((op, text))
    return merged


def text_diff(old: str, new: str, *, context: int = CONTEXT_LINES) -> list[Line]:
    """Line rows from `old` to `new`; an empty list when they are equal."""
    if old == new:
        return []
    a, b = old.splitlines(), new.splitlines()
    rows: list[Line] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag == "equal":
            rows.extend(Line("same", i1 + k + 1, j1 + k + 1, [("same", a[i1 + k])]) for k in range(i2 - i1))
            continue
        olds, news = a[i1:i2], b[j1:j2]
        paired = tag == "replace" and sum(map(len, olds)) + sum(map(len, news)) <= MAX_WORD_DIFF_CHARS
        for k in range(max(len(olds), len(news))):
            if paired and k < len(olds) and k < len(news):
                old_parts, new_parts = _words(olds[k], news[k])
                rows.append(Line("removed", i1 + k + 1, None, old_parts))
                rows.append(Line("added", None, j1 + k + 1, new_parts))
                continue
            if k < len(olds):
                rows.append(Line("removed", i1 + k + 1, None, [("removed", olds[k])]))
            if k < len(news):
                rows.append(Line("added", None, j1 + k + 1, [("added", news[k])]))
    return _fold(rows, context)


def _fold(rows: list[Line], context: int) -> list[Line]:
    """Unchanged lines further than `context` from any change become one "skip" row."""
    near = [False] * len(rows)
    for i, row in enumerate(rows):
        if row.kind != "same":
            for j in range(max(0, i - context), min(len(rows), i + context + 1)):
                near[j] = True
    folded: list[Line] = []
    for row, keep in zip(rows, near, strict=True):
        if keep:
            folded.append(row)
        elif folded and folded[-1].kind == "skip":
            folded[-1].skipped += 1
        else:
            folded.append(Line("skip", row.old_no, row.new_no, skipped=1))
    return folded


def list_diff(old: list, new: list) -> dict:
    return {"added": [x for x in new if x not in old], "removed": [x for x in old if x not in new]}


def _json_lines(value) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


# How each versioned field is compared and named to a reader.
FIELD_LABELS = {
    "title": "Title",
    "content": "Content",
    "summary": "Summary",
    "manual_tags": "Manual tags",
    "auto_tags": "Auto tags",
    "priority": "Priority",
    "pinned": "Pinned",
    "metadata": "Metadata",
}


def version_diff(old: dict, new: dict) -> list[dict]:
    """What changed from one version's fields to another's, field by field, in FIELD_LABELS order:
    {"field", "label", "kind": "text" | "tags" | "value", ...}. Texts (title, content, summary and
    metadata as indented JSON) are line diffs; tags are added and removed; priority and pin are
    old → new. Unchanged fields are left out."""
    changes: list[dict] = []
    for name, label in FIELD_LABELS.items():
        a, b = old.get(name), new.get(name)
        if name == "auto_tags":
            a = [item["tag"] for item in a or []]
            b = [item["tag"] for item in b or []]
        if a == b:
            continue
        entry: dict = {"field": name, "label": label}
        if name in ("title", "content", "summary"):
            entry.update(kind="text", lines=text_diff(a or "", b or ""))
        elif name == "metadata":
            entry.update(kind="text", lines=text_diff(_json_lines(a or {}), _json_lines(b or {})))
        elif name in ("manual_tags", "auto_tags"):
            entry.update(kind="tags", **list_diff(a or [], b or []))
        else:
            entry.update(kind="value", old=a, new=b)
        changes.append(entry)
    return changes


def diff_as_json(changes: list[dict]) -> list[dict]:
    """version_diff's result with its lines as plain dicts (the API's shape)."""
    return [
        {**change, "lines": [line.as_dict() for line in change["lines"]]} if change["kind"] == "text" else change
        for change in changes
    ]
