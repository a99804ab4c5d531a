"""Tags, tiers, pins and priority on the pages."""

from __future__ import annotations

from memories import services
from memories.models import Memory
from tests.factories import make_memory
from tests.memories.helpers import age

# --- Pages ----------------------------------------------------------------------------------------------------


def test_memory_page_shows_tier_reason_decay_priority_tags_and_history(logged_in_client, user):
    memory = age(make_memory(user, manual_tags=["mine"]), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    services.memory_pin(memory=memory, pinned=True)
    html = logged_in_client.get(f"/memories/{memory.pk}/").content.decode()
    for text in (
        "pinned",
        "Decay",
        "Priority",
        "Last accessed",
        "Tier history",
        "moved to hot on",
        'class="badge tag-manual"',
        'class="badge tag-auto" href',
        "Auto tag · confidence",
        'type="range"',
    ):
        assert text in html


def test_the_tag_editor_adds_and_removes_and_shows_errors(logged_in_client, user):
    memory = make_memory(user)
    url = f"/memories/{memory.pk}/tags/"
    response = logged_in_client.post(url, {"tags": "Alpha, beta gamma"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "beta-gamma" in response.content.decode()
    assert Memory.objects.get(pk=memory.pk).manual_tags == ["alpha", "beta-gamma"]
    response = logged_in_client.post(url, {"remove": "alpha"}, HTTP_HX_REQUEST="true")
    assert Memory.objects.get(pk=memory.pk).manual_tags == ["beta-gamma"]
    response = logged_in_client.post(url, {"tags": "x" * 65}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and "65 characters" in response.content.decode()
    response = logged_in_client.post(url, {"tags": "x" * 65})  # without JavaScript: back to the page
    assert response.status_code == 302
    assert "65 characters" in logged_in_client.get(response["Location"]).content.decode()


def test_priority_slider_saves_and_refuses_bad_values(logged_in_client, user):
    memory = make_memory(user)
    url = f"/memories/{memory.pk}/priority/"
    assert logged_in_client.post(url, {"priority": "0.7"}, HTTP_HX_REQUEST="true").status_code == 200
    assert Memory.objects.get(pk=memory.pk).priority == 0.7
    for bad in ("abc", "1.5", ""):
        response = logged_in_client.post(url, {"priority": bad}, HTTP_HX_REQUEST="true")
        assert response.status_code == 422 and 'role="alert"' in response.content.decode()
    assert Memory.objects.get(pk=memory.pk).priority == 0.7


def test_pin_toggle_on_the_list_swaps_the_row(logged_in_client, user):
    memory = make_memory(user)
    response = logged_in_client.post(
        f"/memories/{memory.pk}/pin/", {"pinned": "1", "from": "list"}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code == 200 and f'id="memory-{memory.pk}"' in html and 'aria-pressed="true"' in html
    assert Memory.objects.get(pk=memory.pk).pinned


def test_pages_of_another_users_memory_are_404(logged_in_client, other_user):
    theirs = make_memory(other_user)
    for path in ("pin", "priority", "tags"):
        assert (
            logged_in_client.post(
                f"/memories/{theirs.pk}/{path}/", {"pinned": "1", "priority": "1", "tags": "x"}
            ).status_code
            == 404
        )
    assert logged_in_client.get(f"/memories/{theirs.pk}/tier/").status_code == 404


def test_tag_page_lists_the_users_tags_with_counts(logged_in_client, user, other_user):
    make_memory(user, manual_tags=["finance"])
    make_memory(other_user, manual_tags=["secret-project"])
    html = logged_in_client.get("/memories/tags/").content.decode()
    assert "finance" in html and "secret-project" not in html and "/memories/?tag=finance" in html
    assert "No tag starts with" in logged_in_client.get("/memories/tags/", {"q": "zzz"}).content.decode()


def test_memory_list_filters_by_tier_tag_and_source(logged_in_client, user):
    keep = make_memory(user, content="Hot note.", manual_tags=["alpha"])
    old = age(make_memory(user, content="Old note."), days=90, priority=0.0)
    services.memories_retier(memory_ids=[old.pk])
    html = logged_in_client.get("/memories/", {"tier": "archive"}).content.decode()
    assert "Old note" in html and "Hot note" not in html
    html = logged_in_client.get("/memories/", {"tag": "alpha", "source": "upload"}).content.decode()
    assert f'id="memory-{keep.pk}"' in html and "Old note" not in html
