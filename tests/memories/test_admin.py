"""Memory edits in Django admin go through the services: retiered, rechunked, re-embedded, refused clearly."""

from __future__ import annotations

from memories import services
from memories.models import MemoryChunk
from memories.search import hybrid_search
from tests.factories import make_memory
from tests.memories.helpers import age


def post_change(admin_client, memory, **changes):
    """Submit the memory's admin change form as it is shown, with `changes` and no chunk forms."""
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = admin_client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update(
        {
            "manual_tags": "",
            "metadata": "{}",
            "pinned": "",
            "chunks-TOTAL_FORMS": "0",
            "chunks-INITIAL_FORMS": "0",
            "versions-TOTAL_FORMS": "0",
            "versions-INITIAL_FORMS": "0",
            **changes,
        }
    )
    return admin_client.post(url, {k: v for k, v in data.items() if v is not None})


def test_a_memory_edited_in_admin_is_retiered_with_its_chunks(admin_client, user):
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    response = post_change(
        admin_client, memory, owner=user.pk, priority="0.9", last_accessed_at_0="", last_accessed_at_1=""
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    memory.refresh_from_db()
    assert (memory.priority, memory.tier) == (0.9, "hot")
    assert set(memory.chunks.values_list("tier", flat=True)) == {"hot"}


def test_a_content_edit_in_admin_is_rechunked_embedded_and_found_by_search(admin_client, user):
    memory = make_memory(user, title="Garden", content="Tomatoes need full sun and deep watering twice a week.")
    response = post_change(
        admin_client, memory, content="Tomatoes need full sun. Plant marigolds beside them against aphids."
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    chunk_texts = list(MemoryChunk.objects.filter(memory=memory).values_list("text", flat=True))
    assert any("marigolds" in text for text in chunk_texts)
    response = hybrid_search(user.pk, "marigolds", limit=5)
    assert response.results and response.results[0].memory_id == memory.pk
    assert "marigolds" in response.results[0].text


def test_a_bad_value_in_admin_is_shown_on_its_field_and_changes_nothing(admin_client, user):
    memory = make_memory(user, title="Garden", content="Tomatoes need full sun.")
    response = post_change(admin_client, memory, content="   ")
    assert response.status_code == 200
    assert "content is empty" in response.content.decode() or "This field is required" in response.content.decode()
    memory.refresh_from_db()
    assert memory.content == "Tomatoes need full sun."


def test_an_admin_edit_is_a_version_by_the_admin_shown_inline_and_restorable(admin_client, admin_user, user):
    from memories.models import Memory, MemoryVersion

    memory = make_memory(user, "The harbour bell rang twice at midnight.", title="Bell")
    response = post_change(
        admin_client,
        memory,
        owner=user.pk,
        content="The harbour bell rang once at dawn.",
        last_accessed_at_0="",
        last_accessed_at_1="",
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    latest = MemoryVersion.objects.filter(pgh_obj_id=memory.pk).order_by("-version").first()
    assert latest.version == 2 and latest.pgh_context["label"] == f"admin {admin_user.get_username()}"
    assert hybrid_search(user.pk, "bell rang once at dawn", limit=1).results[0].memory_id == memory.pk
    page = admin_client.get(f"/admin/memories/memory/{memory.pk}/change/").content.decode()
    assert "versions (newest first)" in page.lower() and f"admin {admin_user.get_username()}" in page
    first = MemoryVersion.objects.get(pgh_obj_id=memory.pk, version=1)
    response = admin_client.post(
        "/admin/memories/memoryversion/", {"action": "restore_version", "_selected_action": [first.pk]}
    )
    assert response.status_code == 302
    memory = Memory.objects.get(pk=memory.pk)
    assert (memory.content, memory.version) == ("The harbour bell rang twice at midnight.", 3)
    assert admin_client.get(f"/admin/memories/memoryversion/{first.pk}/change/").status_code == 200
    assert admin_client.get("/admin/memories/activity/").status_code == 200
