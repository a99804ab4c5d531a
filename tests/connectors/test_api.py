"""The connectors JSON API: list, items, sync now, disconnect; owner-scoped."""

from __future__ import annotations

from allauth.socialaccount.models import SocialToken

from connectors.models import ConnectorAccount
from memories.models import Memory
from tests.connectors.conftest import sync


def test_the_list_shows_each_connector_with_status_last_sync_and_counts(api, drive_account, fake_google):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    fake_google.add_file("b.png", "image/png", b"\x89PNG")
    sync(drive_account)

    body = api.get("/api/v1/connectors").json()

    (connector,) = body["items"]
    assert connector["id"] == drive_account.pk and connector["provider"] == "google-drive"
    assert connector["providerName"] == "Google Drive" and connector["status"] == "synced"
    assert connector["lastSyncAt"] and connector["lastError"] is None
    assert connector["itemCounts"] == {"synced": 1, "skipped": 1, "failed": 0, "removed": 0}


def test_items_are_paginated_and_filterable_by_status(api, drive_account, fake_google):
    for i in range(3):
        fake_google.add_file(f"{i}.txt", "text/plain", f"File {i}".encode())
    fake_google.add_file("x.png", "image/png", b"\x89PNG")
    sync(drive_account)

    page = api.get(f"/api/v1/connectors/{drive_account.pk}/items", {"limit": 2}).json()
    skipped = api.get(f"/api/v1/connectors/{drive_account.pk}/items", {"status": "skipped"}).json()

    assert page["count"] == 4 and len(page["items"]) == 2 and page["limit"] == 2
    assert set(page["items"][0]) == {
        "id",
        "externalId",
        "title",
        "mime",
        "url",
        "remoteModifiedAt",
        "status",
        "error",
        "memoryId",
        "updatedAt",
    }
    assert [i["title"] for i in skipped["items"]] == ["x.png"]
    assert "image/png files are not synced" in skipped["items"][0]["error"]
    assert api.get(f"/api/v1/connectors/{drive_account.pk}/items", {"status": "bogus"}).status_code == 422


def test_post_sync_runs_a_sync_and_answers_202(api, drive_account, fake_google):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")

    response = api.post(f"/api/v1/connectors/{drive_account.pk}/sync")

    assert response.status_code == 202
    assert response.json()["status"] == "synced"  # tests run tasks inline; a worker runs them in production
    assert Memory.objects.count() == 1


def test_sync_of_a_connector_that_needs_reconnecting_is_a_422_with_the_reason(api, drive_account):
    ConnectorAccount.objects.filter(pk=drive_account.pk).update(status=ConnectorAccount.Status.RECONNECT)

    response = api.post(f"/api/v1/connectors/{drive_account.pk}/sync")

    assert response.status_code == 422
    assert response.json() == {"detail": "Google Drive needs to be reconnected before it can sync"}


def test_another_users_connector_is_a_404_everywhere(other_api, drive_account):
    assert other_api.get("/api/v1/connectors").json() == {"items": []}
    for method, path in [("get", ""), ("get", "/items"), ("post", "/sync"), ("delete", "")]:
        response = getattr(other_api, method)(f"/api/v1/connectors/{drive_account.pk}{path}")
        assert response.status_code == 404, (method, path)
    assert ConnectorAccount.objects.filter(pk=drive_account.pk).exists()


def test_disconnect_revokes_the_token_and_keeps_memories_unless_asked(api, drive_account, fake_google):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    sync(drive_account)
    refresh_token = SocialToken.objects.get(account=drive_account.social_account).token_secret

    response = api.delete(f"/api/v1/connectors/{drive_account.pk}")

    assert response.status_code == 200 and response.json() == {"deletedMemories": 0}
    assert fake_google.revoked == [refresh_token]
    assert not ConnectorAccount.objects.exists() and not SocialToken.objects.exists()
    assert Memory.objects.count() == 1


def test_disconnect_with_delete_memories_deletes_what_it_synced(api, user, drive_account, fake_google):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    sync(drive_account)
    from tests.factories import make_memory

    make_memory(user, "A note of my own.")

    response = api.delete(f"/api/v1/connectors/{drive_account.pk}?deleteMemories=true")

    assert response.json() == {"deletedMemories": 1}
    assert list(Memory.objects.values_list("content", flat=True)) == ["A note of my own."]


def test_kept_memories_are_adopted_again_when_the_same_drive_is_reconnected(api, user, drive_account, fake_google):
    from tests.connectors.conftest import connect_google

    file = fake_google.add_file("a.txt", "text/plain", b"Alpha")
    sync(drive_account)
    kept = Memory.objects.get()
    api.delete(f"/api/v1/connectors/{drive_account.pk}")
    drive_account.social_account.delete()

    again = sync(connect_google(user, fake_google))

    assert Memory.objects.count() == 1
    assert again.items.get(external_id=file.id).memory_id == kept.pk


def test_disconnect_still_works_when_the_provider_cannot_be_reached(api, drive_account, fake_google, waits):
    fake_google.stop()

    response = api.delete(f"/api/v1/connectors/{drive_account.pk}")

    assert response.status_code == 200 and waits == []
    assert not ConnectorAccount.objects.exists()
