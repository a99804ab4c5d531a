"""Tags, pins and priority through the JSON API."""

from __future__ import annotations

import pytest

from memories import services
from tests.factories import make_memory
from tests.memories.helpers import age

# --- API ----------------------------------------------------------------------------------------------------


def test_api_adds_and_removes_manual_tags(api, user):
    memory = make_memory(user)
    body = api.post(f"/api/v1/memories/{memory.pk}/tags", {"tags": ["Launch Plan", "q1"]}).json()
    assert body["manualTags"] == ["launch-plan", "q1"] and body["tags"][:2] == ["launch-plan", "q1"]
    body = api.delete(f"/api/v1/memories/{memory.pk}/tags/launch-plan").json()
    assert body["manualTags"] == ["q1"]
    response = api.delete(f"/api/v1/memories/{memory.pk}/tags/nope")
    assert response.status_code == 404 and "no manual tag 'nope'" in response.json()["detail"]


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"tags": [""]}, "cannot be empty"),
        ({"tags": ["x" * 65]}, "65 characters"),
        ({"tags": "single-string"}, None),
        ({"tags": [1]}, None),
        ({}, None),
        ({"tags": ["ok"], "extra": 1}, None),
    ],
)
def test_api_refuses_bad_tags_with_422(api, user, payload, reason):
    memory = make_memory(user)
    response = api.post(f"/api/v1/memories/{memory.pk}/tags", payload)
    assert response.status_code == 422
    if reason:
        assert reason in response.json()["detail"]


def test_api_refuses_the_fifty_first_manual_tag(api, user):
    memory = make_memory(user, manual_tags=[f"t{i}" for i in range(50)])
    response = api.post(f"/api/v1/memories/{memory.pk}/tags", {"tags": ["t50"]})
    assert response.status_code == 422 and "at most 50" in response.json()["detail"]


def test_api_pins_and_unpins(api, user):
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    body = api.post(f"/api/v1/memories/{memory.pk}/pin").json()
    assert (body["pinned"], body["tier"], body["tierReason"]) == (True, "hot", "pinned")
    assert body["tierHistory"][0]["toTier"] == "hot" and body["tierHistory"][0]["cause"] == "pin"
    body = api.delete(f"/api/v1/memories/{memory.pk}/pin").json()
    assert body["pinned"] is False


def test_another_users_memory_is_a_404_for_tags_and_pins(api, other_user):
    theirs = make_memory(other_user, manual_tags=["private"])
    for response in (
        api.post(f"/api/v1/memories/{theirs.pk}/pin"),
        api.delete(f"/api/v1/memories/{theirs.pk}/pin"),
        api.post(f"/api/v1/memories/{theirs.pk}/tags", {"tags": ["x"]}),
        api.delete(f"/api/v1/memories/{theirs.pk}/tags/private"),
    ):
        assert response.status_code == 404
    theirs.refresh_from_db()
    assert (theirs.pinned, theirs.manual_tags) == (False, ["private"])


@pytest.mark.parametrize("priority", ["0.5", "high", 1.5, -0.1, True, None])
def test_api_refuses_a_priority_that_is_not_a_number_from_0_to_1(api, user, priority):
    memory = make_memory(user, priority=0.4)
    assert api.patch(f"/api/v1/memories/{memory.pk}", {"priority": priority}).status_code == 422
    memory.refresh_from_db()
    assert memory.priority == 0.4


def test_api_lists_tags_with_counts_and_filters_memories_by_any_tag(api, user, other_user):
    make_memory(user, content="Budget one.", manual_tags=["finance"])
    make_memory(user, content="Budget two.", manual_tags=["finance", "q4"])
    make_memory(other_user, content="Not yours.", manual_tags=["finance"])
    items = {i["tag"]: i for i in api.get("/api/v1/tags").json()["items"]}
    assert (items["finance"]["count"], items["finance"]["manual"]) == (2, 2)
    assert items["upload"]["count"] == 2 and items["upload"]["manual"] == 0
    assert [i["tag"] for i in api.get("/api/v1/tags", {"prefix": "fin"}).json()["items"]] == ["finance"]
    assert api.get("/api/v1/memories", {"tag": "upload"}).json()["count"] == 2
    assert api.get("/api/v1/memories", {"tag": ["finance", "q4"]}).json()["count"] == 1
    assert api.get("/api/v1/tags", {"limit": 0}).status_code == 422
