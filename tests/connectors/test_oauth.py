"""The OAuth connect flow through allauth's real views, with the fake Google and Notion token endpoints."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import requests
from allauth.socialaccount.models import SocialAccount, SocialToken
from django.test import Client
from django.utils import timezone

from connectors.models import ConnectorAccount
from tests.connectors.conftest import connect_google, sync


def run_connect_flow(client: Client, provider: str) -> tuple:
    """Press "Connect" on /connectors, let the fake provider approve, and follow its redirect back."""
    response = client.post(f"/accounts/{provider}/login/", {"process": "connect", "next": "/connectors/"})
    assert response.status_code == 302, response.content[:500]
    authorize_url = response["Location"]
    approval = requests.get(authorize_url, allow_redirects=False, timeout=10)  # real HTTP to the fake
    assert approval.status_code == 302, approval.text
    callback = urlsplit(approval.headers["Location"])
    assert callback.netloc == "testserver"
    done = client.get(f"{callback.path}?{callback.query}")
    return authorize_url, done


def test_connecting_google_drive_goes_through_allauth_and_leaves_a_connector_ready_to_sync(
    logged_in_client, user, fake_google
):
    authorize_url, done = run_connect_flow(logged_in_client, "google")

    query = parse_qs(urlsplit(authorize_url).query)
    assert authorize_url.startswith(fake_google.url + "/o/oauth2/v2/auth?")
    assert "https://www.googleapis.com/auth/drive.readonly" in query["scope"][0].split()
    assert query["access_type"] == ["offline"] and query["prompt"] == ["consent"]
    assert query["code_challenge_method"] == ["S256"]
    assert done.status_code == 302 and done["Location"] == "/connectors/"
    account = ConnectorAccount.objects.get(owner=user)
    assert account.provider == "google-drive" and account.status == ConnectorAccount.Status.READY
    assert account.label == "alice@example.org"
    token = SocialToken.objects.get(account=account.social_account)
    assert token.token in fake_google.access_tokens
    assert token.token_secret in fake_google.refresh_tokens  # offline access: a refresh token was issued
    assert token.expires_at > timezone.now()
    page = logged_in_client.get("/connectors/")
    assert "Google Drive" in page.content.decode() and "Ready to sync" in page.content.decode()


def test_a_connected_google_drive_syncs_with_the_tokens_from_the_flow(logged_in_client, user, fake_google):
    fake_google.add_file("a.txt", "text/plain", b"Synced after connecting")
    run_connect_flow(logged_in_client, "google")

    account = sync(ConnectorAccount.objects.get(owner=user))

    assert account.status == ConnectorAccount.Status.SYNCED and account.synced_count == 1


def test_connecting_notion_goes_through_allauth_with_basic_auth_on_the_token_endpoint(
    logged_in_client, user, fake_notion
):
    authorize_url, done = run_connect_flow(logged_in_client, "notion")

    assert authorize_url.startswith(fake_notion.url + "/v1/oauth/authorize?")
    assert parse_qs(urlsplit(authorize_url).query)["owner"] == ["user"]
    assert done.status_code == 302 and done["Location"] == "/connectors/"
    token_call = fake_notion.calls("/v1/oauth/token")[0]
    assert token_call.headers["authorization"].startswith("Basic ")
    account = ConnectorAccount.objects.get(owner=user)
    assert account.provider == "notion" and account.status == ConnectorAccount.Status.READY
    assert account.label == "Acme workspace · Ada Lovelace"
    assert SocialToken.objects.get(account=account.social_account).token in fake_notion.tokens


def test_reconnecting_after_a_revocation_clears_reconnect_needed(logged_in_client, user, fake_google):
    run_connect_flow(logged_in_client, "google")
    fake_google.revoke_everything()
    account = sync(ConnectorAccount.objects.get(owner=user))
    assert account.status == ConnectorAccount.Status.RECONNECT

    run_connect_flow(logged_in_client, "google")

    account.refresh_from_db()
    assert ConnectorAccount.objects.filter(owner=user).count() == 1
    assert account.status == ConnectorAccount.Status.SYNCED and account.last_error == ""
    assert sync(account).status == ConnectorAccount.Status.SYNCED


def test_a_google_account_already_connected_by_someone_else_makes_no_connector_for_you(user, other_user, fake_google):
    connect_google(user, fake_google, "alice")
    intruder = Client()
    intruder.force_login(other_user)

    _, done = run_connect_flow(intruder, "google")

    assert done.status_code == 302
    assert not ConnectorAccount.objects.filter(owner=other_user).exists()
    assert SocialAccount.objects.get(provider="google").user == user


def test_a_provider_that_is_not_configured_shows_a_disabled_button_with_what_to_set(logged_in_client):
    page = logged_in_client.get("/connectors/").content.decode()

    assert "Not configured yet: set KYBERNESIS_GOOGLE_CLIENT_ID and KYBERNESIS_GOOGLE_CLIENT_SECRET" in page
    assert "KYBERNESIS_NOTION_CLIENT_ID" in page
