"""The memories JSON API: auth, shapes, filters, and every kind of bad input."""

from __future__ import annotations

import pytest
from django.test import Client

from core.models import ApiToken
from memories.models import Memory
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

MEMORY_KEYS = {
    "id",
    "title",
    "source",
    "priority",
    "tier",
    "pinned",
    "tags",
    "autoTags",
    "manualTags",
    "createdAt",
    "updatedAt",
    "lastAccessedAt",
    "chunkCount",
}


def test_no_token_is_401():
    response = Client().get("/api/v1/memories")
    assert response.status_code == 401


def test_a_wrong_token_is_401(user):
    response = Client().get("/api/v1/memories", HTTP_AUTHORIZATION="Bearer kyb_not-a-real-token")
    assert response.status_code == 401


def test_a_token_of_a_deactivated_user_is_401(api, user):
    user.is_active = False
    user.save()
    assert api.get("/api/v1/memories").status_code == 401


def test_tokens_are_hashed_at_rest(api):
    stored = ApiToken.objects.get()
    assert api.token not in (stored.key_hash, stored.prefix)
    assert stored.key_hash == ApiToken.hash_key(api.token)
    assert api.token.startswith(stored.prefix)


def test_the_session_also_authenticates(logged_in_client):
    assert logged_in_client.get("/api/v1/memories").status_code == 200


def test_create_returns_201_with_camel_case_keys(api):
    response = api.post(
        "/api/v1/memories",
        {
            "title": "Plan",
            "content": "We ship in March.",
            "tags": ["  Launch Plan ", "Q1"],
            "priority": 0.8,
            "metadata": {"filename": "plan.md"},
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body.keys() >= MEMORY_KEYS
    assert body["manualTags"] == ["launch-plan", "q1"]
    assert body["tags"][:2] == ["launch-plan", "q1"]
    assert {"tag": "upload", "confidence": 1.0} in body["autoTags"]
    assert body["source"] == "upload" and body["priority"] == 0.8 and body["chunkCount"] == 1
    assert body["tier"] == "hot" and body["pinned"] is False


def test_another_users_memory_is_404_everywhere(api, other_user):
    theirs = make_memory(other_user)
    url = f"/api/v1/memories/{theirs.pk}"
    assert api.get(url).status_code == 404
    assert api.patch(url, {"title": "mine now"}).status_code == 404
    assert api.delete(url).status_code == 404
    assert Memory.objects.get(pk=theirs.pk).title == theirs.title
    assert api.get("/api/v1/memories").json()["count"] == 0


def test_get_patch_delete_round_trip(api):
    created = api.post("/api/v1/memories", {"title": "A", "content": "first version"}).json()
    url = f"/api/v1/memories/{created['id']}"
    got = api.get(url).json()
    assert got["content"] == "first version"
    patched = api.patch(url, {"content": "second version, longer", "tags": ["x"], "priority": 0.2}).json()
    assert (patched["content"], patched["manualTags"], patched["priority"]) == ("second version, longer", ["x"], 0.2)
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404


def test_list_is_paginated_and_filters_by_tier_source_and_tag(api, user):
    for i in range(5):
        make_memory(
            user, content=f"note {i}", manual_tags=["even"] if i % 2 == 0 else [], source="chat" if i == 4 else "upload"
        )
    Memory.objects.filter(owner=user, title="note 3").update(tier="archive")
    page = api.get("/api/v1/memories", {"limit": 2, "offset": 0}).json()
    assert (page["count"], len(page["items"]), page["limit"]) == (5, 2, 2)
    assert [m["title"] for m in api.get("/api/v1/memories", {"offset": 4}).json()["items"]] == ["note 0"]
    assert {m["title"] for m in api.get("/api/v1/memories", {"tag": "even"}).json()["items"]} == {
        "note 0",
        "note 2",
        "note 4",
    }
    assert [m["title"] for m in api.get("/api/v1/memories", {"source": "chat"}).json()["items"]] == ["note 4"]
    assert [m["title"] for m in api.get("/api/v1/memories", {"tier": "archive"}).json()["items"]] == ["note 3"]


def test_batch_creates_all_items_in_input_order(api):
    items = [{"title": f"item {i}", "content": f"content {i}"} for i in range(3)]
    response = api.post("/api/v1/memories/batch", {"items": items})
    assert response.status_code == 201, response.content
    assert [m["title"] for m in response.json()["items"]] == ["item 0", "item 1", "item 2"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"title": "t", "content": ""}, 422),
        ({"title": "t", "content": "   \n "}, 422),
        ({"title": "t"}, 422),
        ({"title": "t", "content": 42}, 422),
        ({"title": ["t"], "content": "ok"}, 422),
        ({"title": "t", "content": "ok", "priority": 1.01}, 422),
        ({"title": "t", "content": "ok", "priority": -1}, 422),
        ({"title": "t", "content": "ok", "priority": "high"}, 422),
        ({"title": "t", "content": "ok", "source": "email"}, 422),
        ({"title": "t", "content": "ok", "tags": "not-a-list"}, 422),
        ({"title": "t", "content": "ok", "tags": ["x" * 65]}, 422),
        ({"title": "t", "content": "ok", "metadata": [1, 2]}, 422),
        ({"title": "t", "content": "ok", "colour": "blue"}, 422),
    ],
)
def test_bad_memory_input_gets_a_clear_error_and_stores_nothing(api, body, status):
    response = api.post("/api/v1/memories", body)
    assert response.status_code == status, response.content
    assert response.json()["detail"]
    assert not Memory.objects.exists()


def test_a_body_that_is_not_json_is_422(api):
    response = api.post("/api/v1/memories", "{not json", content_type="application/json")
    assert response.status_code == 422
    assert "not valid JSON" in response.json()["detail"]
    assert not Memory.objects.exists()


def test_content_over_the_limit_is_413(api, settings):
    settings.KYBERNESIS_MAX_MEMORY_CHARS = 100
    response = api.post("/api/v1/memories", {"title": "t", "content": "y" * 101})
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]
    assert not Memory.objects.exists()


def test_a_batch_of_more_than_500_items_is_422(api):
    items = [{"title": "x", "content": "y"}] * 501
    response = api.post("/api/v1/memories/batch", {"items": items})
    assert response.status_code == 422
    assert "500" in response.json()["detail"]
    assert not Memory.objects.exists()


def test_a_bad_item_refuses_the_whole_batch_and_the_reply_names_it(api):
    items = [{"title": "a", "content": "ok"}, {"title": "b", "content": "ok"}, {"title": "c", "content": " "}]
    response = api.post("/api/v1/memories/batch", {"items": items})
    assert response.status_code == 422
    assert response.json()["index"] == 2 and "item 2" in response.json()["detail"]
    assert not Memory.objects.exists()


def test_a_badly_typed_item_in_a_batch_is_named_by_its_position(api):
    items = [{"title": "a", "content": "ok"}, {"title": "b", "content": "ok", "priority": "x"}]
    response = api.post("/api/v1/memories/batch", {"items": items})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-3:] == ["items", 1, "priority"]
    assert not Memory.objects.exists()


def test_patch_with_bad_values_is_422_and_changes_nothing(api, user):
    memory = make_memory(user, content="keep me", priority=0.5)
    url = f"/api/v1/memories/{memory.pk}"
    assert api.patch(url, {"priority": 7}).status_code == 422
    assert api.patch(url, {"content": ""}).status_code == 422
    assert api.patch(url, {"priority": None}).status_code == 422
    memory.refresh_from_db()
    assert (memory.content, memory.priority) == ("keep me", 0.5)


@pytest.mark.parametrize(
    "query", [{"limit": 0}, {"limit": 501}, {"offset": -1}, {"tier": "cold"}, {"source": "fax"}, {"limit": "ten"}]
)
def test_bad_list_parameters_are_422(api, query):
    assert api.get("/api/v1/memories", query).status_code == 422


def test_the_openapi_docs_are_served(logged_in_client):
    assert logged_in_client.get("/api/v1/docs").status_code == 200
    schema = logged_in_client.get("/api/v1/openapi.json").json()
    assert "/api/v1/memories" in schema["paths"]
