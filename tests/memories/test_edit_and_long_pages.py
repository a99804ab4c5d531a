"""Editing a memory on its page, and long memories shown a page of chunks at a time."""

from __future__ import annotations

import pytest

from memories.models import Memory
from memories.services import memory_update
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def test_editing_title_content_and_metadata_goes_through_the_service_and_shows_edited(logged_in_client, user):
    memory = make_memory(user, content="First draft about the garden.", title="Draft")
    assert memory.edited_at is None
    page = logged_in_client.get(f"/memories/{memory.pk}/edit/").content.decode()
    assert "First draft about the garden." in page and 'name="metadata"' in page
    response = logged_in_client.post(
        f"/memories/{memory.pk}/edit/",
        {"title": "Garden plan", "content": "Tomatoes go in the south bed.", "metadata": '{"season": "summer"}'},
    )
    assert response.status_code == 302 and response["Location"] == f"/memories/{memory.pk}/"
    memory.refresh_from_db()
    assert (memory.title, memory.content, memory.metadata) == (
        "Garden plan",
        "Tomatoes go in the south bed.",
        {"season": "summer"},
    )
    assert memory.edited_at is not None
    assert [c.text for c in memory.chunks.order_by("position")] == ["Tomatoes go in the south bed."]
    assert "edited" in logged_in_client.get(f"/memories/{memory.pk}/").content.decode()


def test_saving_unchanged_fields_does_not_mark_the_memory_edited(logged_in_client, user):
    memory = make_memory(user, content="Same text.", title="Same")
    logged_in_client.post(f"/memories/{memory.pk}/edit/", {"title": "Same", "content": "Same text.", "metadata": ""})
    memory.refresh_from_db()
    assert memory.edited_at is None


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than"),
        ('{"a": ' + "1" * 5000 + "}", "Exceeds the limit"),
    ],
    ids=["malformed", "not-an-object", "too-deep", "long-integer"],
)
def test_bad_metadata_is_refused_with_a_reason(logged_in_client, user, metadata, message):
    memory = make_memory(user, content="Keep me.")
    response = logged_in_client.post(
        f"/memories/{memory.pk}/edit/", {"title": "", "content": "Changed.", "metadata": metadata}
    )
    assert response.status_code == 422 and message in response.content.decode()
    memory.refresh_from_db()
    assert memory.content == "Keep me."


def test_empty_content_is_refused(logged_in_client, user):
    memory = make_memory(user, content="Keep me.")
    response = logged_in_client.post(f"/memories/{memory.pk}/edit/", {"title": "", "content": "", "metadata": ""})
    assert response.status_code == 422
    memory.refresh_from_db()
    assert memory.content == "Keep me."


def test_another_users_memory_cannot_be_edited(logged_in_client, other_user):
    theirs = make_memory(other_user, content="Not yours.")
    assert logged_in_client.get(f"/memories/{theirs.pk}/edit/").status_code == 404
    assert logged_in_client.post(f"/memories/{theirs.pk}/edit/", {"content": "x"}).status_code == 404
    assert Memory.objects.get(pk=theirs.pk).content == "Not yours."


def test_the_api_patch_sets_edited_at_too(api, user):
    memory = make_memory(user, content="Before.")
    body = api.patch(f"/api/v1/memories/{memory.pk}", {"content": "After."}).json()
    assert body["editedAt"] is not None


def _long_memory(user):
    content = "\n\n".join(
        f"Section {i}. " + f"Paragraph {i} about the plan for project number {i}. " * 12 for i in range(70)
    )
    return make_memory(user, content=content, title="Long")


def test_a_long_memory_shows_one_page_of_chunks_and_a_link_to_chunk_n_opens_its_page(logged_in_client, user):
    memory = _long_memory(user)
    total = memory.chunks.count()
    assert total > 40
    first = logged_in_client.get(f"/memories/{memory.pk}/").content.decode()
    assert first.count('class="chunk"') == 20
    assert 'id="chunk-0"' in first and f'id="chunk-{total - 1}"' not in first
    last = total - 1
    page = logged_in_client.get(f"/memories/{memory.pk}/", {"chunk": last}).content.decode()
    assert f'id="chunk-{last}"' in page and 'id="chunk-0"' not in page
    assert "Next chunks" not in page and "Previous chunks" in page


@pytest.mark.parametrize("chunk", ["-1", "abc", "99999"])
def test_a_bad_chunk_number_still_opens_the_page(logged_in_client, user, chunk):
    memory = _long_memory(user)
    assert logged_in_client.get(f"/memories/{memory.pk}/", {"chunk": chunk}).status_code == 200


def test_search_results_link_to_the_chunk_position(logged_in_client, user):
    memory = _long_memory(user)
    response = logged_in_client.get("/search/", {"q": "Paragraph 55 project number 55"})
    top = response.context["response"].results[0]
    position = memory.chunks.get(pk=top.chunk_id).position
    assert position > 0  # a position, not the chunk's database id
    assert f"/memories/{memory.pk}/open?chunk={position}" in response.content.decode()


def test_a_title_taken_from_the_first_line_follows_an_edit_and_a_given_one_stays(user):
    derived = make_memory(user, content="Alice works with the Product Team.\nMore on Friday.")
    assert derived.title == "Alice works with the Product Team."
    memory_update(memory=derived, content="Bob works with the Design Team in Berlin.")
    derived.refresh_from_db()
    assert derived.title == "Bob works with the Design Team in Berlin."
    given = make_memory(user, content="Alice works with the Product Team.", title="Team notes")
    memory_update(memory=given, content="Bob works with the Design Team in Berlin.")
    given.refresh_from_db()
    assert given.title == "Team notes", "a title someone gave is theirs"
    memory_update(memory=derived, title="Berlin", content="Carol joined the Design Team.")
    derived.refresh_from_db()
    assert derived.title == "Berlin", "a title in the same edit wins"
