"""The History and Activity pages: versions listed, a readable diff, restore with confirmation, trails."""

from __future__ import annotations

import pytest

from core.actors import Actor, acting
from memories import services
from memories.models import Memory
from tests.factories import UserFactory, make_memory

pytestmark = pytest.mark.django_db

OLD = "The lighthouse keeper logged the storm at midnight.\nThe bell rang twice."
NEW = "The lighthouse keeper logged the storm at dawn.\nThe bell rang twice."


def test_the_memory_page_loads_its_history_and_activity_panels(logged_in_client, user):
    memory = make_memory(user, OLD, title="Storm log")
    with acting(Actor.person(user)):
        services.memory_update(memory=memory, content=NEW)
    page = logged_in_client.get(f"/memories/{memory.pk}/").content.decode()
    assert f'hx-get="/memories/{memory.pk}/history/?panel=1"' in page
    assert f'hx-get="/memories/{memory.pk}/activity/?panel=1"' in page
    panel = logged_in_client.get(f"/memories/{memory.pk}/history/?panel=1", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in panel and "Version 2" in panel and "Version 1" in panel and "changed content" in panel
    trail = logged_in_client.get(f"/memories/{memory.pk}/activity/?panel=1", HTTP_HX_REQUEST="true").content.decode()
    assert "Edited content" in trail and "Created" in trail and user.username in trail


def test_compare_shows_the_changed_words_marked(logged_in_client, user):
    memory = make_memory(user, OLD, title="Storm log")
    services.memory_update(memory=memory, content=NEW, title="Storm log, corrected")
    html = logged_in_client.get(f"/memories/{memory.pk}/history/?a=1&b=2").content.decode()
    assert "<del>midnight</del>" in html and "<ins>dawn</ins>" in html
    assert "Version 1 → version 2" in html and "<ins>, corrected</ins>" in html
    fragment = logged_in_client.get(f"/memories/{memory.pk}/history/?a=2&b=1", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and "<ins>dawn</ins>" in fragment


def test_compare_with_a_bad_version_says_why(logged_in_client, user):
    memory = make_memory(user, OLD)
    response = logged_in_client.get(f"/memories/{memory.pk}/history/?a=0&b=9")
    assert response.status_code == 404 and "numbered from 1" in response.content.decode()


def test_restore_asks_first_then_restores_and_says_so(logged_in_client, user):
    memory = make_memory(user, OLD, title="Storm log")
    services.memory_update(memory=memory, content=NEW)
    confirm = logged_in_client.get(f"/memories/{memory.pk}/history/1/restore/")
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "Yes, restore version 1" in html and "<ins>midnight</ins>" in html
    assert Memory.objects.get(pk=memory.pk).content == NEW  # looking at the confirmation changes nothing
    done = logged_in_client.post(f"/memories/{memory.pk}/history/1/restore/", follow=True)
    assert "Restored version 1" in done.content.decode() and "version 3" in done.content.decode()
    memory.refresh_from_db()
    assert (memory.content, memory.version) == (OLD, 3)


def test_a_version_page_shows_it_in_full_with_its_diff(logged_in_client, user):
    memory = make_memory(user, OLD, title="Storm log", manual_tags=["sea"])
    services.memory_update(memory=memory, content=NEW)
    html = logged_in_client.get(f"/memories/{memory.pk}/history/1/").content.decode()
    assert "Version 1" in html and "midnight" in html and "Restore this version" in html and "sea" in html
    html = logged_in_client.get(f"/memories/{memory.pk}/history/2/").content.decode()
    assert "What changed from version 1" in html and "<ins>dawn</ins>" in html
    for bad in ("0", "-1", "77", "abc", "99999999999999999999"):
        assert logged_in_client.get(f"/memories/{memory.pk}/history/{bad}/").status_code == 404
        assert logged_in_client.post(f"/memories/{memory.pk}/history/{bad}/restore/").status_code == 404


def test_the_account_activity_page_is_in_the_nav_and_pages(logged_in_client, user):
    for i in range(35):
        make_memory(user, f"Note number {i} about the harbour.")
    html = logged_in_client.get("/memories/activity/").content.decode()
    assert 'href="/memories/activity/"' in html and 'aria-current="page"' in html
    assert "Page 1 of 2" in html and html.count('class="activity-row') == 30
    second = logged_in_client.get("/memories/activity/?page=2", HTTP_HX_REQUEST="true").content.decode()
    assert second.count('class="activity-row') == 5 and "<html" not in second


def test_another_users_history_and_activity_pages_are_404(logged_in_client):
    other = UserFactory()
    memory = make_memory(other, OLD)
    for path in ("history/", "history/1/", "history/1/restore/", "activity/", "history/?panel=1"):
        assert logged_in_client.get(f"/memories/{memory.pk}/{path}").status_code == 404
    assert logged_in_client.post(f"/memories/{memory.pk}/history/1/restore/").status_code == 404
    assert "harbour" not in logged_in_client.get("/memories/activity/").content.decode()
    assert Memory.objects.get(pk=memory.pk).version == 1
