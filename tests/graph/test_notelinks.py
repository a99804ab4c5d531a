"""[[Wikilinks]] of imported notes resolve to the note they name, as Obsidian resolves them."""

from __future__ import annotations

import pytest

from graph.notelinks import note_link_evidence, path_names
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def note(owner, path: str, *, title: str | None = None, links=(), content: str | None = None):
    metadata = {"path": path, **({"wikilinks": list(links)} if links else {})}
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return make_memory(owner, content or f"The note {path}.", title=title or stem, metadata=metadata)


def pairs(owner, *memories) -> set[frozenset]:
    found = note_link_evidence(owner.pk, None)
    names = {m.pk: m.metadata.get("path") or m.title for m in memories}
    return {frozenset((names[a], names[b])) for a, b in found}


def test_path_names_run_from_the_whole_path_down_to_the_file_name():
    assert path_names("vault/Daily/2024-05-02.md") == ["vault/daily/2024-05-02", "daily/2024-05-02", "2024-05-02"]


def test_a_link_names_a_note_by_its_file_name_even_when_its_front_matter_gives_another_title(user):
    """[[Roadmap]] means Projects/Roadmap.md by its file name, even when its title is 'Product roadmap'."""
    roadmap = note(user, "Projects/Roadmap.md", title="Product roadmap")
    hiring = note(user, "Projects/Hiring plan.md", links=["Roadmap"])
    assert pairs(user, roadmap, hiring) == {frozenset({"Projects/Roadmap.md", "Projects/Hiring plan.md"})}


def test_a_link_may_name_the_notes_path_with_or_without_its_extension(user):
    daily = note(user, "Daily/2024-05-02.md")
    other_daily = note(user, "Archive/2024-05-02.md")
    by_path = note(user, "Roadmap.md", links=["Daily/2024-05-02"])
    with_suffix = note(user, "Budget.md", links=["Archive/2024-05-02.md"])
    assert pairs(user, daily, other_daily, by_path, with_suffix) == {
        frozenset({"Daily/2024-05-02.md", "Roadmap.md"}),
        frozenset({"Archive/2024-05-02.md", "Budget.md"}),
    }


def test_of_two_notes_with_one_name_the_link_means_the_one_in_its_folder_else_the_shortest_path(user):
    near = note(user, "Work/Index.md")
    far = note(user, "Work/Old/Deep/Index.md")
    top = note(user, "Index.md")
    from_work = note(user, "Work/Plan.md", links=["Index"])
    from_elsewhere = note(user, "Home/Garden.md", links=["index"])
    assert pairs(user, near, far, top, from_work, from_elsewhere) == {
        frozenset({"Work/Index.md", "Work/Plan.md"}),
        frozenset({"Index.md", "Home/Garden.md"}),
    }


def test_a_link_that_names_no_note_links_to_the_memory_with_that_title(user):
    target = make_memory(user, "A memory typed in, not imported.", title="Meeting notes")
    linking = note(user, "Journal.md", links=["meeting notes"])
    assert pairs(user, target, linking) == {frozenset({"Meeting notes", "Journal.md"})}


def test_links_never_reach_another_owners_notes(user, other_user):
    note(other_user, "Roadmap.md")
    note(user, "Plan.md", links=["Roadmap"])
    assert note_link_evidence(user.pk, None) == {}
