"""The connectors pages: connect buttons, status, sync now, disconnect with a choice, the item list."""

from __future__ import annotations

from connectors.models import ConnectorAccount, ConnectorItem
from memories.models import Memory
from tests.connectors.conftest import sync


def test_the_nav_links_to_connectors(logged_in_client):
    page = logged_in_client.get("/memories/").content.decode()
    assert 'href="/connectors/"' in page and ">Connectors</a>" in page


def test_the_page_offers_connect_buttons_that_post_a_connect_to_allauth(logged_in_client, fake_google, fake_notion):
    page = logged_in_client.get("/connectors/").content.decode()

    assert 'action="/accounts/google/login/"' in page and 'action="/accounts/notion/login/"' in page
    assert 'name="process" value="connect"' in page
    assert "Connect Google Drive" in page and "Connect Notion" in page
    assert "Nothing connected yet" in page


def test_each_account_shows_its_status_last_sync_counts_and_actions(logged_in_client, drive_account, fake_google):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    sync(drive_account)

    page = logged_in_client.get("/connectors/").content.decode()

    assert "alice@example.org" in page and "status-synced" in page
    assert "Sync now" in page and f'action="/connectors/{drive_account.pk}/sync/"' in page
    assert 'name="memories" value="keep"' in page and 'name="memories" value="delete"' in page


def test_sync_now_syncs_and_says_so(logged_in_client, drive_account, fake_google):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")

    response = logged_in_client.post(f"/connectors/{drive_account.pk}/sync/", follow=True)

    assert "Google Drive is synced." in response.content.decode()
    assert Memory.objects.count() == 1


def test_reconnect_needed_is_shown_with_a_reconnect_button_instead_of_sync(
    logged_in_client, drive_account, fake_google
):
    fake_google.revoke_everything()
    sync(drive_account)

    page = logged_in_client.get("/connectors/").content.decode()

    assert "Reconnect needed" in page and "Reconnect Google Drive" in page
    assert "revoked or has expired" in page
    assert f'action="/connectors/{drive_account.pk}/sync/"' not in page
    response = logged_in_client.post(f"/connectors/{drive_account.pk}/sync/", follow=True)
    assert "needs to be reconnected before it can sync" in response.content.decode()


def test_disconnect_keeps_or_deletes_the_synced_memories_as_chosen(logged_in_client, user, fake_google):
    from tests.connectors.conftest import connect_google

    for choice, remaining in (("keep", 1), ("delete", 0)):
        Memory.objects.all().delete()
        account = connect_google(user, fake_google)
        fake_google.add_file(f"{choice}.txt", "text/plain", f"About to {choice}".encode())
        sync(account)

        response = logged_in_client.post(f"/connectors/{account.pk}/disconnect/", {"memories": choice}, follow=True)

        assert response.status_code == 200
        assert not ConnectorAccount.objects.filter(pk=account.pk).exists()
        assert Memory.objects.count() == remaining
        account.social_account.delete()


def test_disconnect_without_a_choice_changes_nothing_and_says_why(logged_in_client, drive_account):
    response = logged_in_client.post(f"/connectors/{drive_account.pk}/disconnect/", follow=True)

    assert "Choose whether to keep or delete" in response.content.decode()
    assert ConnectorAccount.objects.filter(pk=drive_account.pk).exists()


def test_the_detail_page_lists_items_with_status_and_error_page_by_page(logged_in_client, drive_account, fake_google):
    for i in range(30):
        fake_google.add_file(f"note {i:02}.txt", "text/plain", f"Note {i}".encode())
    fake_google.add_file("photo.png", "image/png", b"\x89PNG")
    sync(drive_account)

    first = logged_in_client.get(f"/connectors/{drive_account.pk}/").content.decode()
    second = logged_in_client.get(f"/connectors/{drive_account.pk}/?page=2").content.decode()
    skipped = logged_in_client.get(f"/connectors/{drive_account.pk}/?status=skipped").content.decode()

    assert "Page 1 of 2" in first and "31 items" in first
    assert "note 00.txt" in first and "note 29.txt" in second
    assert "photo.png" in skipped and "image/png files are not synced" in skipped and "note 00.txt" not in skipped
    assert 'class="badge item-skipped"' in skipped


def test_the_detail_fragment_is_served_to_htmx_for_polling(logged_in_client, drive_account):
    response = logged_in_client.get(f"/connectors/{drive_account.pk}/", HTTP_HX_REQUEST="true")

    body = response.content.decode()
    assert body.lstrip().startswith('<div id="connector-body"') and "<html" not in body


def test_another_users_connector_page_and_actions_are_404(client, other_user, drive_account):
    client.force_login(other_user)
    assert client.get(f"/connectors/{drive_account.pk}/").status_code == 404
    assert client.post(f"/connectors/{drive_account.pk}/sync/").status_code == 404
    assert client.post(f"/connectors/{drive_account.pk}/disconnect/", {"memories": "delete"}).status_code == 404
    assert ConnectorAccount.objects.filter(pk=drive_account.pk).exists()
    assert ConnectorItem.objects.count() == 0


def test_sync_now_with_a_worker_shows_the_sync_as_waiting_and_the_page_follows_it(
    logged_in_client, drive_account, fake_google, monkeypatch
):
    import django_q.tasks

    queued = []
    monkeypatch.setattr(django_q.tasks, "async_task", lambda func, *args, **kwargs: queued.append((func, args)))
    fake_google.add_file("a.txt", "text/plain", b"Alpha")

    response = logged_in_client.post(f"/connectors/{drive_account.pk}/sync/", follow=True)

    body = response.content.decode()
    assert queued == [("connectors.tasks.sync_account", (drive_account.pk,))]
    assert "will sync in a moment" in body and "Waiting for the worker" in body
    assert 'hx-trigger="every 3s"' in body
    sync(drive_account)  # the worker picks it up
    fragment = logged_in_client.get("/connectors/", HTTP_HX_REQUEST="true").content.decode()
    assert "status-synced" in fragment and "every 3s" not in fragment


def test_connector_accounts_and_items_are_in_admin(client, drive_account, fake_google):
    from django.contrib.auth import get_user_model

    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    sync(drive_account)
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-for-admin-42")
    client.force_login(admin)

    for path in (
        "/admin/connectors/connectoraccount/",
        f"/admin/connectors/connectoraccount/{drive_account.pk}/change/",
        "/admin/connectors/connectoritem/",
        "/admin/socialaccount/socialapp/add/",
    ):
        assert client.get(path).status_code == 200, path


def test_the_api_schema_documents_the_connector_endpoints(logged_in_client):
    paths = logged_in_client.get("/api/v1/openapi.json").json()["paths"]
    assert {
        "/api/v1/connectors",
        "/api/v1/connectors/{connector_id}/items",
        "/api/v1/connectors/{connector_id}/sync",
    } <= set(paths)
