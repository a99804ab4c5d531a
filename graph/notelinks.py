"""Links a person made by hand: a note's [[wikilinks]] (kept by imports in metadata["wikilinks"]) become
memory links with the reason "linked in note", found again on every link refresh like the other evidence."""

from __future__ import annotations

from django.db.models.functions import Lower

from memories.models import Memory

WIKILINKS_KEY = "wikilinks"


def note_link_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int], tuple[float, float]]:
    """(a, b) -> (score 1, confidence 1) for each pair where one memory's note links to the other by its
    title (case-insensitive, as Obsidian resolves names). A pair counts when either side is in focus, so a
    note imported before its target is linked once the target arrives."""
    linking = list(
        Memory.objects.filter(owner_id=owner_id, metadata__has_key=WIKILINKS_KEY).values_list("pk", "metadata")
    )
    if not linking:
        return {}
    names = {
        str(name).strip().lower()
        for _, metadata in linking
        for name in (metadata.get(WIKILINKS_KEY) or [])
        if isinstance(name, str)
    }
    by_title: dict[str, list[int]] = {}
    for pk, title in (
        Memory.objects.filter(owner_id=owner_id)
        .annotate(lower=Lower("title"))
        .filter(lower__in=list(names))
        .values_list("pk", "lower")
    ):
        by_title.setdefault(title, []).append(pk)
    found = {}
    for pk, metadata in linking:
        for name in metadata.get(WIKILINKS_KEY) or []:
            if not isinstance(name, str):
                continue
            for target in by_title.get(name.strip().lower(), ()):
                if target == pk or (focus is not None and pk not in focus and target not in focus):
                    continue
                found[(min(pk, target), max(pk, target))] = (1.0, 1.0)
    return found
