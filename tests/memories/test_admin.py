"""Memory edits in Django admin go through the services: retiered, rechunked, re-embedded, refused clearly."""

from __future__ import annotations

from memories import services
from memories.models import MemoryChunk
from tests.factories import make_memory
from tests.memories.helpers import age


def test_a_memory_edited_in_admin_is_retiered_with_its_chunks(client, user):
    from django.contrib.auth import get_user_model

    admin_user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-for-admin-123")
    client.force_login(admin_user)
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update({"owner": user.pk, "priority": "0.9", "pinned": "", "manual_tags": "", "metadata": "{}",
                 "last_accessed_at_0": "", "last_accessed_at_1": "",
                 "chunks-TOTAL_FORMS": "0", "chunks-INITIAL_FORMS": "0"})
    data = {k: v for k, v in data.items() if v is not None}
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    memory.refresh_from_db()
    assert (memory.priority, memory.tier) == (0.9, "hot")
    assert set(memory.chunks.values_list("tier", flat=True)) == {"hot"}


def test_a_content_edit_in_admin_is_rechunked_embedded_and_found_by_search(client, user):
    from django.contrib.auth import get_user_model

    from memories.search import hybrid_search

    admin_user = get_user_model().objects.create_superuser("root2", "root2@example.com", "pw-for-admin-123")
    client.force_login(admin_user)
    memory = make_memory(user, title="Garden", content="Tomatoes need full sun and deep watering twice a week.")
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update({"content": "Tomatoes need full sun. Plant marigolds beside them against aphids.",
                 "manual_tags": "", "metadata": "{}", "pinned": "",
                 "chunks-TOTAL_FORMS": "0", "chunks-INITIAL_FORMS": "0"})
    data = {k: v for k, v in data.items() if v is not None}
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    chunk_texts = list(MemoryChunk.objects.filter(memory=memory).values_list("text", flat=True))
    assert any("marigolds" in text for text in chunk_texts)
    response = hybrid_search(user, "marigolds", limit=5)
    assert response.results and response.results[0].memory_id == memory.pk
    assert "marigolds" in response.results[0].text


def test_a_bad_value_in_admin_is_shown_on_its_field_and_changes_nothing(client, user):
    from django.contrib.auth import get_user_model

    admin_user = get_user_model().objects.create_superuser("root3", "root3@example.com", "pw-for-admin-123")
    client.force_login(admin_user)
    memory = make_memory(user, title="Garden", content="Tomatoes need full sun.")
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update({"content": "   ", "manual_tags": "", "metadata": "{}", "pinned": "",
                 "chunks-TOTAL_FORMS": "0", "chunks-INITIAL_FORMS": "0"})
    data = {k: v for k, v in data.items() if v is not None}
    response = client.post(url, data)
    assert response.status_code == 200
    assert "content is empty" in response.content.decode() or "This field is required" in response.content.decode()
    memory.refresh_from_db()
    assert memory.content == "Tomatoes need full sun."
