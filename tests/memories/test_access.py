"""An access is a use of a memory, not an appearance of it (memories.services.access)."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps

from memories.models import Memory
from memories.services import memory_accesses_reset
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def counts(*memories) -> list[int]:
    return [Memory.objects.get(pk=m.pk).access_count for m in memories]


def test_opening_the_memory_page_counts_once_per_open(logged_in_client, user):
    memory = make_memory(user, content="The dentist appointment is on Friday.")
    logged_in_client.get(f"/memories/{memory.pk}/")
    logged_in_client.get(f"/memories/{memory.pk}/")
    assert counts(memory) == [2]


def test_reading_a_memory_through_the_api_counts_but_listing_does_not(api, user):
    memory = make_memory(user, content="Postgres vacuum settings for the analytics cluster.")
    assert api.get("/api/v1/memories").status_code == 200
    assert counts(memory) == [0]
    body = api.get(f"/api/v1/memories/{memory.pk}").json()
    assert body["accessCount"] == 1 and body["lastAccessedAt"] is not None
    assert counts(memory) == [1]


def test_search_results_are_not_accesses_but_following_one_is(logged_in_client, api, user):
    shown = make_memory(user, content="Zorblax reactor maintenance checklist for the spring shutdown.")
    also = make_memory(user, content="Zorblax reactor coolant pump notes and vendor contacts.")
    page = logged_in_client.get("/search/", {"q": "Zorblax reactor"}).content.decode()
    assert api.post("/api/v1/search", {"query": "Zorblax reactor"}).status_code == 200
    assert api.get("/api/v1/search", {"q": "Zorblax"}).status_code == 200
    assert counts(shown, also) == [0, 0]
    chunk = shown.chunks.get()
    assert f"/memories/{shown.pk}/open?chunk={chunk.position}" in page

    response = logged_in_client.get(f"/memories/{shown.pk}/open", {"chunk": chunk.position})
    assert response.status_code == 302
    assert response["Location"] == f"/memories/{shown.pk}/?chunk={chunk.position}#chunk-{chunk.position}"
    assert counts(shown, also) == [0, 0]  # the link only redirects
    logged_in_client.get(response["Location"])  # the page the click-through lands on counts the open
    assert counts(shown, also) == [1, 0]


def test_following_a_result_counts_exactly_once(logged_in_client, user):
    memory = make_memory(user, content="Quarterly tax filing checklist.")
    position = memory.chunks.get().position
    response = logged_in_client.get(f"/memories/{memory.pk}/open", {"chunk": position}, follow=True)
    assert response.status_code == 200 and len(response.redirect_chain) == 1
    assert counts(memory) == [1]
    # A second visit through the same link is a second open, counted once too.
    logged_in_client.get(f"/memories/{memory.pk}/open", {"chunk": position}, follow=True)
    assert counts(memory) == [2]


def test_a_search_never_counts(logged_in_client, api, user):
    memory = make_memory(user, content="Glimmerwort seed order for the allotment.")
    for _ in range(3):
        assert "Glimmerwort" in logged_in_client.get("/search/", {"q": "Glimmerwort"}).content.decode()
        assert logged_in_client.get("/search/", {"q": "Glimmerwort"}, headers={"HX-Request": "true"}).status_code == 200
        assert api.post("/api/v1/search", {"query": "Glimmerwort"}).status_code == 200
    assert counts(memory) == [0]


def test_paging_through_an_open_memorys_chunks_is_not_another_open(logged_in_client, user):
    memory = make_memory(user, content="\n\n".join(f"Paragraph {i} about the garden shed. " * 40 for i in range(60)))
    assert memory.chunks.count() > 20  # more than one page of chunks
    page = logged_in_client.get(f"/memories/{memory.pk}/").content.decode()
    assert "?cpage=2" in page
    assert logged_in_client.get(f"/memories/{memory.pk}/", {"cpage": 2}).status_code == 200
    assert counts(memory) == [1]


def test_the_click_through_ignores_a_bad_chunk_and_hides_other_peoples_memories(logged_in_client, user, other_user):
    memory = make_memory(user, content="A note.")
    for chunk in ("abc", "99999999999999999999999", "-1", ""):
        response = logged_in_client.get(f"/memories/{memory.pk}/open", {"chunk": chunk})
        assert response.status_code == 302 and response["Location"] == f"/memories/{memory.pk}/"
    theirs = make_memory(other_user, content="Not yours.")
    assert logged_in_client.get(f"/memories/{theirs.pk}/open").status_code == 404
    assert counts(theirs) == [0]


def test_graph_panels_and_the_list_are_not_accesses(logged_in_client, user):
    memory = make_memory(user, content="Kubernetes cluster upgrade plan.")
    logged_in_client.get("/memories/")
    logged_in_client.get(f"/graph/memories/{memory.pk}/panel/")
    assert counts(memory) == [0]


def test_resetting_forgets_counts_inflated_by_the_old_rule(user, other_user):
    mine, theirs = make_memory(user, content="One."), make_memory(other_user, content="Two.")
    Memory.objects.update(access_count=13)
    assert memory_accesses_reset(owner=user) == 1
    assert counts(mine, theirs) == [0, 13]
    migration = importlib.import_module("memories.migrations.0015_reset_accesses_counted_by_search")
    migration.reset_accesses(django_apps, None)
    assert counts(mine, theirs) == [0, 0]
    assert Memory.objects.filter(last_accessed_at__isnull=False).count() == 0
