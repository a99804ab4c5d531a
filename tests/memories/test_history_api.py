"""Versions and activity through the JSON API: list, read, diff, restore, bad numbers, isolation."""

from __future__ import annotations

import pytest

from memories import services
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

OLD = "The lighthouse keeper logged the storm at midnight and rang the harbour bell twice."
NEW = "Quarterly revenue grew in the northern region after the new distribution contract."


def test_versions_are_listed_newest_first_with_what_each_changed(api, user):
    memory = make_memory(user, content=OLD, title="Storm log")
    services.memory_update(memory=memory, content=NEW)
    services.memory_tags_add(memory=memory, tags=["work"])
    body = api.get(f"/api/v1/memories/{memory.pk}/versions").json()
    assert body["count"] == 3
    assert [v["version"] for v in body["items"]] == [3, 2, 1]
    assert body["items"][0]["changed"] == ["manual_tags"]
    assert "content" in body["items"][1]["changed"]
    assert body["items"][0]["current"] is True and body["items"][2]["changed"] == []
    assert body["items"][0]["actor"] == {"kind": "system", "label": "system"}
    page = api.get(f"/api/v1/memories/{memory.pk}/versions?limit=1&offset=1").json()
    assert [v["version"] for v in page["items"]] == [2]


def test_a_version_reads_in_full_with_a_word_diff_from_the_one_before(api, user):
    memory = make_memory(user, content="First line.\nThe storm came at midnight.\nLast line.")
    services.memory_update(memory=memory, content="First line.\nThe storm came at dawn.\nLast line.")
    body = api.get(f"/api/v1/memories/{memory.pk}/versions/2").json()
    assert body["content"].endswith("Last line.") and body["diffFrom"] == 1
    (change,) = [c for c in body["changes"] if c["field"] == "content"]
    removed = [line for line in change["lines"] if line["kind"] == "removed"]
    added = [line for line in change["lines"] if line["kind"] == "added"]
    assert [p["text"] for p in removed[0]["parts"] if p["op"] == "removed"] == ["midnight"]
    assert [p["text"] for p in added[0]["parts"] if p["op"] == "added"] == ["dawn"]
    body = api.get(f"/api/v1/memories/{memory.pk}/versions/1?diffFrom=2").json()
    assert body["diffFrom"] == 2 and body["changes"]


def test_restore_through_the_api_makes_a_new_version_and_search_finds_the_old_text_first(api, user):
    memory = make_memory(user, content=OLD, title="Storm log")
    make_memory(user, content="Notes on the harbour renovation budget for next spring.")
    services.memory_update(memory=memory, content=NEW, title="Revenue")
    response = api.post(f"/api/v1/memories/{memory.pk}/versions/1/restore")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["content"], body["title"], body["version"]) == (OLD, "Storm log", 3)
    hits = api.get("/api/v1/search", {"q": "lighthouse keeper storm midnight harbour bell"}).json()
    assert hits["results"][0]["memoryId"] == memory.pk
    kinds = [e["kind"] for e in api.get(f"/api/v1/memories/{memory.pk}/activity").json()["items"]]
    assert kinds[0] == "restored" and "created" in kinds


@pytest.mark.parametrize("number", ["0", "-1", "99", "99999999999999999999", "abc"])
def test_bad_version_numbers_are_404_with_a_reason(api, user, number):
    memory = make_memory(user, content=OLD)
    for response in (
        api.get(f"/api/v1/memories/{memory.pk}/versions/{number}"),
        api.post(f"/api/v1/memories/{memory.pk}/versions/{number}/restore"),
    ):
        assert response.status_code == 404
        assert "version" in response.json()["detail"]


def test_a_deleted_memorys_versions_are_404(api, user):
    memory = make_memory(user, content=OLD)
    services.memory_delete(memory=memory)
    assert api.get(f"/api/v1/memories/{memory.pk}/versions").status_code == 404
    assert api.get(f"/api/v1/memories/{memory.pk}/versions/1").status_code == 404
    assert api.post(f"/api/v1/memories/{memory.pk}/versions/1/restore").status_code == 404


def test_another_user_sees_none_of_the_versions_or_activity(api, user, other_api, other_user):
    memory = make_memory(user, content=OLD)
    services.memory_update(memory=memory, content=NEW)
    make_memory(other_user, content="Someone else's note about apples.")
    for path in (
        f"/api/v1/memories/{memory.pk}/versions",
        f"/api/v1/memories/{memory.pk}/versions/1",
        f"/api/v1/memories/{memory.pk}/activity",
    ):
        assert other_api.get(path).status_code == 404
    assert other_api.post(f"/api/v1/memories/{memory.pk}/versions/1/restore").status_code == 404
    theirs = other_api.get("/api/v1/activity").json()
    assert theirs["count"] == 1 and all(e["memoryId"] != memory.pk for e in theirs["items"])
    mine = api.get("/api/v1/activity").json()
    assert {e["kind"] for e in mine["items"]} >= {"created", "edited"}
    memory.refresh_from_db()
    assert memory.content == NEW


def test_the_account_trail_shows_tier_moves_and_pins_with_their_actor(api, user):
    memory = make_memory(user, content=OLD, priority=0.1)
    services.memory_pin(memory=memory, pinned=True)
    items = api.get("/api/v1/activity").json()["items"]
    kinds = [e["kind"] for e in items]
    assert "pinned" in kinds and "created" in kinds
    moves = [e for e in items if e["kind"] == "tier_moved"]
    if moves:  # a low-priority memory that starts warm moves to hot when pinned
        assert moves[0]["detail"]["toTier"] == "hot" and moves[0]["actor"]["label"].startswith("tier rules")
    assert all(e["memoryTitle"] for e in items)
