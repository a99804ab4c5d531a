"""Bulk actions on the memory list: a confirmation page first, then the action, then an undo."""

from __future__ import annotations

import pytest

from memories.models import Memory
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def _post(client, ids, action, tag="", confirmed=True):
    data = {"ids": [str(i) for i in ids], "action": action, "tag": tag, "next": "/memories/"}
    if confirmed:
        data["confirmed"] = "1"
    return client.post("/memories/bulk/", data)


def test_the_first_post_asks_for_confirmation_and_changes_nothing(logged_in_client, user):
    notes = [make_memory(user, content=f"Note {i} about tea.") for i in range(3)]
    response = _post(logged_in_client, [n.pk for n in notes], "delete", confirmed=False)
    page = response.content.decode()
    assert (
        response.status_code == 200
        and "Move to the trash: 3 memories?" in page
        and 'name="confirmed" value="1"' in page
    )
    assert Memory.objects.filter(owner=user).count() == 3


def test_bulk_tag_then_undo_removes_it_only_where_it_was_added(logged_in_client, user):
    had = make_memory(user, content="Already tagged.", manual_tags=["travel"])
    new = make_memory(user, content="Not tagged yet.")
    response = _post(logged_in_client, [had.pk, new.pk], "tag", tag="Travel")
    assert response.status_code == 302
    assert Memory.objects.get(pk=new.pk).manual_tags == ["travel"]
    page = logged_in_client.get("/memories/").content.decode()
    # said once, in the bar that holds the Undo button, not again as a flash message above it
    assert page.count("Tagged 2 memories with “travel”.") == 1 and "Undo" in page
    logged_in_client.post("/memories/bulk/undo/", {"next": "/memories/"})
    assert Memory.objects.get(pk=new.pk).manual_tags == []
    assert Memory.objects.get(pk=had.pk).manual_tags == ["travel"]


def test_the_confirmation_shows_the_tag_as_it_will_be_stored(logged_in_client, user):
    note = make_memory(user, content="A book to read.")
    page = _post(logged_in_client, [note.pk], "tag", tag="Reading List", confirmed=False).content.decode()
    assert '<span class="badge tag-manual">reading-list</span>' in page
    assert 'name="tag" value="reading-list"' in page


def test_bulk_pin_and_undo(logged_in_client, user):
    notes = [make_memory(user, content=f"Pin me {i}.") for i in range(2)]
    _post(logged_in_client, [n.pk for n in notes], "pin")
    assert all(Memory.objects.filter(owner=user).values_list("pinned", flat=True))
    logged_in_client.post("/memories/bulk/undo/", {"next": "/memories/"})
    assert not any(Memory.objects.filter(owner=user).values_list("pinned", flat=True))


def test_bulk_delete_and_undo_restores_the_memories(logged_in_client, user):
    keep = make_memory(user, content="Keep this one.")
    gone = make_memory(user, content="Delete this one about sailing.", title="Sailing", manual_tags=["boats"])
    _post(logged_in_client, [gone.pk], "delete")
    assert list(Memory.objects.filter(owner=user).values_list("pk", flat=True)) == [keep.pk]
    response = logged_in_client.post("/memories/bulk/undo/", {"next": "/memories/"})
    assert response.status_code == 302
    restored = Memory.objects.get(owner=user, title="Sailing")
    assert restored.content == "Delete this one about sailing." and restored.manual_tags == ["boats"]
    assert restored.chunks.count() == 1
    # a second undo has nothing left to undo
    logged_in_client.post("/memories/bulk/undo/", {"next": "/memories/"})
    assert Memory.objects.filter(owner=user, title="Sailing").count() == 1


def test_other_users_memories_in_a_selection_are_ignored(logged_in_client, user, other_user):
    mine = make_memory(user, content="Mine.")
    theirs = make_memory(other_user, content="Theirs.")
    _post(logged_in_client, [mine.pk, theirs.pk], "delete")
    assert Memory.objects.filter(pk=theirs.pk).exists() and not Memory.objects.filter(pk=mine.pk).exists()


@pytest.mark.parametrize(
    ("ids", "action", "tag", "message"),
    [
        ([], "pin", "", "Select at least one memory first."),
        (["x"], "pin", "", "not a memory id"),
        ([1], "explode", "", "unknown action"),
        ([1], "tag", "", "tag"),
    ],
)
def test_bad_bulk_requests_get_a_visible_reason(logged_in_client, user, ids, action, tag, message):
    note = make_memory(user, content="A note.")
    ids = [note.pk if i == 1 else i for i in ids]
    response = logged_in_client.post(
        "/memories/bulk/",
        {"ids": ids, "action": action, "tag": tag, "confirmed": "1", "next": "/memories/"},
        follow=True,
    )
    assert response.status_code == 200
    assert message.lower() in response.content.decode().lower()


@pytest.mark.parametrize(("sort", "first"), [("title", "Alpha"), ("priority", "Important"), ("created", "Zulu")])
def test_the_list_sorts(logged_in_client, user, sort, first):
    make_memory(user, content="Notes on apples.", title="Alpha", priority=0.2)
    make_memory(user, content="Notes on bridges.", title="Important", priority=0.9)
    make_memory(user, content="Notes on cactus.", title="Zulu", priority=0.3)
    page = logged_in_client.get("/memories/", {"sort": sort})
    assert page.context["page"].object_list[0].title == first


def test_the_bulk_addresses_opened_with_a_get_lead_back_to_the_list(logged_in_client):
    for path in ("/memories/bulk/", "/memories/bulk/undo/"):
        response = logged_in_client.get(path)
        assert response.status_code == 302 and response["Location"] == "/memories/"
