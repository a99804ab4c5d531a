"""Links a person made by hand: a note's [[wikilinks]] (kept by imports in metadata["wikilinks"]) become
memory links with the reason "linked in note", found again on every link refresh like the other evidence.

A link names a note the way Obsidian resolves it: by its file name ([[Roadmap]] is Projects/Roadmap.md,
whatever title its front matter gives it) or by as much of its path as it needs ([[Daily/2024-05-02]]),
case-insensitively; when several notes answer, the one in the linking note's folder, else the one with
the shortest path. A link that names no imported note links to the memories with that title.
"""

from __future__ import annotations

from django.db.models.functions import Lower

from memories.models import Memory

WIKILINKS_KEY = "wikilinks"
PATH_KEY = "path"  # the note's path in its vault, kept by imports
_NOTE_SUFFIXES = (".md", ".markdown")


def _without_suffix(path: str) -> str:
    return path.rsplit(".", 1)[0] if path.lower().endswith(_NOTE_SUFFIXES) else path


def _link_name(name: str) -> str:
    return _without_suffix(name.strip().strip("/")).lower()


def path_names(path: str) -> list[str]:
    """What a note at this vault path answers to, lowercased: its path without the extension from each
    folder down, ending with its bare file name ("projects/roadmap", then "roadmap")."""
    parts = _without_suffix(path.strip("/")).lower().split("/")
    return ["/".join(parts[i:]) for i in range(len(parts))]


def _folder(path: str) -> str:
    return path.strip("/").rpartition("/")[0].lower()


def note_link_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int], tuple[float, float]]:
    """(a, b) -> (score 1, confidence 1) for each pair where one memory's note links to the other. A pair
    counts when either side is in focus, so a note imported before its target is linked once the target
    arrives."""
    linking = list(
        Memory.objects.filter(owner_id=owner_id, metadata__has_key=WIKILINKS_KEY).values_list("pk", "metadata")
    )
    if not linking:
        return {}
    names = {
        _link_name(name)
        for _, metadata in linking
        for name in (metadata.get(WIKILINKS_KEY) or [])
        if isinstance(name, str) and _link_name(name)
    }
    by_path, by_title = _named(owner_id, names)
    found = {}
    for pk, metadata in linking:
        path = metadata.get(PATH_KEY)
        here = _folder(path) if isinstance(path, str) else ""
        for name in metadata.get(WIKILINKS_KEY) or []:
            if not isinstance(name, str):
                continue
            key = _link_name(name)
            if notes := by_path.get(key):
                targets = [_nearest(notes, here)]
            else:
                targets = by_title.get(key, ())
            for target in targets:
                if target == pk or (focus is not None and pk not in focus and target not in focus):
                    continue
                found[(min(pk, target), max(pk, target))] = (1.0, 1.0)
    return found


def _named(owner_id: int, names: set[str]) -> tuple[dict[str, list[tuple[int, str]]], dict[str, list[int]]]:
    """The owner's memories the link names may mean: notes by the names their paths answer to, and, for
    a name no note answers to, memories by title."""
    by_path: dict[str, list[tuple[int, str]]] = {}
    for pk, path in Memory.objects.filter(owner_id=owner_id, metadata__has_key=PATH_KEY).values_list(
        "pk", f"metadata__{PATH_KEY}"
    ):
        if isinstance(path, str):
            for name in path_names(path):
                if name in names:
                    by_path.setdefault(name, []).append((pk, path))
    by_title: dict[str, list[int]] = {}
    for pk, title in (
        Memory.objects.filter(owner_id=owner_id)
        .annotate(lower=Lower("title"))
        .filter(lower__in=list(names - by_path.keys()))
        .values_list("pk", "lower")
    ):
        by_title.setdefault(title, []).append(pk)
    return by_path, by_title


def _nearest(notes: list[tuple[int, str]], folder: str) -> int:
    """Of several notes a link may mean, Obsidian's choice: one in the linking note's folder, else the
    one with the shortest path (then the first by path, so the choice is stable)."""
    same = [pk for pk, path in notes if _folder(path) == folder]
    if same:
        return min(same)
    return min(notes, key=lambda note: (note[1].count("/"), note[1].lower(), note[0]))[0]
