"""The account's API tokens page: create with scopes and an expiry (the key shown once), the list, and
revoking with a confirmation; bad input is a visible message, and another user's token is a 404."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from core.auth import api_token_find
from core.models import ApiToken
from core.tokens import api_token_create, api_token_revoke
from tests.conftest import ApiClient

URL = "/accounts/tokens/"


def _key(response) -> str:
    match = re.search(
        r'<code class="token-key" id="token-key" tabindex="0">(kyb_[\w-]+)</code>', response.content.decode()
    )
    assert match, "the new key is not on the page"
    return match.group(1)


def test_the_page_offers_a_form_with_read_ticked_and_lists_nothing_yet(logged_in_client):
    response = logged_in_client.get(URL)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'name="scopes" value="read"' in body and 'value="write"' in body
    assert re.search(r'value="read"[^>]*checked', body)
    assert not re.search(r'value="write"[^>]*checked', body)
    assert 'type="date"' in body and f'min="{timezone.localdate().isoformat()}"' in body
    assert "No tokens yet." in body
    assert 'aria-current="page">API tokens</a>' in body


def test_creating_a_token_shows_its_key_once(logged_in_client, user):
    expires = (timezone.localdate() + timedelta(days=30)).isoformat()
    response = logged_in_client.post(URL, {"name": "research agent", "scopes": ["read"], "expires": expires})
    assert response.status_code == 200
    key = _key(response)
    token = api_token_find(key)
    assert token.user == user and token.name == "research agent" and token.scopes == ["read"]
    assert timezone.localdate(token.expires_at).isoformat() == expires
    assert ApiToken.objects.get().key_hash == ApiToken.hash_key(key)
    # The key is in that one response: the page shows the token from now on, never its key.
    again = logged_in_client.get(URL).content.decode()
    assert key not in again and token.prefix in again and "research agent" in again
    assert ApiClient(token=key).get("/api/v1/memories").status_code == 200
    assert ApiClient(token=key).post("/api/v1/memories", {"content": "x"}).status_code == 403


def test_the_list_shows_scopes_expiry_creation_and_last_use(logged_in_client, user):
    api_token_create(user=user, name="laptop")
    _, used = api_token_create(user=user, name="ci", scopes=["read"], expires_at=timezone.now() + timedelta(days=3))
    ApiClient(token=used).get("/api/v1/memories")
    old, _ = api_token_create(user=user, name="old")
    api_token_revoke(token=old)
    body = logged_in_client.get(URL).content.decode()

    def item(name):
        start = body.index(f'<strong class="token-name">{name}<')
        return body[start : body.index("</li>", start)]

    laptop = item("laptop")
    assert 'scope-read">read' in laptop and 'scope-write">write' in laptop and "never" in laptop
    ci = item("ci")
    assert "Last used" in ci and "just now</time>" in ci and "Expires" in ci
    revoked = item("old")
    assert "token-state-revoked" in revoked and "Revoked" in revoked and "Revoke…" not in revoked


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "a", "scopes": ["admin"]}, "Select a valid choice. admin is not one of the available choices."),
        ({"name": "a"}, "Choose at least one scope: read, write or both."),
        ({"name": "a", "scopes": ["read"], "expires": "2020-01-01"}, "The expiry date 2020-01-01 is in the past"),
        ({"name": "a", "scopes": ["read"], "expires": "next week"}, "Give the expiry as a date (YYYY-MM-DD)."),
        ({"name": "", "scopes": ["read"]}, "This field is required."),
        ({"name": "x" * 101, "scopes": ["read"]}, "Ensure this value has at most 100 characters"),
        ({"name": "a\x00b", "scopes": ["read"]}, "Null characters are not allowed."),
    ],
)
def test_bad_input_is_a_visible_message_and_creates_nothing(logged_in_client, data, message):
    response = logged_in_client.post(URL, data)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert 'class="token-key"' not in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_name_already_in_use_is_refused_on_the_page(logged_in_client, user):
    api_token_create(user=user, name="laptop")
    response = logged_in_client.post(URL, {"name": "laptop", "scopes": ["read", "write"]})
    assert response.status_code == 422
    assert "You already have a working token named &#x27;laptop&#x27;." in response.content.decode()
    assert ApiToken.objects.count() == 1


def test_revoking_asks_first_then_revokes(logged_in_client, user):
    token, key = api_token_create(user=user, name="laptop")
    confirm = logged_in_client.get(f"{URL}{token.pk}/revoke/")
    assert confirm.status_code == 200
    assert "Revoke “laptop”?" in confirm.content.decode() and "Yes, revoke it" in confirm.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None  # looking at the question changes nothing
    response = logged_in_client.post(f"{URL}{token.pk}/revoke/", follow=True)
    assert response.redirect_chain[-1][0] == URL
    assert "Revoked the token “laptop”" in response.content.decode()
    assert ApiClient(token=key).get("/api/v1/memories").status_code == 401
    again = logged_in_client.post(f"{URL}{token.pk}/revoke/", follow=True)
    assert "was already revoked" in again.content.decode()


def test_another_user_cannot_see_or_revoke_a_token(user, other_user):
    token, key = api_token_create(user=user, name="mine")
    stranger = Client()
    stranger.force_login(other_user)
    assert "mine" not in stranger.get(URL).content.decode()
    assert stranger.get(f"{URL}{token.pk}/revoke/").status_code == 404
    assert stranger.post(f"{URL}{token.pk}/revoke/").status_code == 404
    assert stranger.post(f"{URL}99999999999999999999/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None
    assert ApiClient(token=key).get("/api/v1/memories").status_code == 200


def test_the_page_needs_a_sign_in(db):
    response = Client().get(URL)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert Client().post(URL, {"name": "x", "scopes": ["read"]}).status_code == 302
    assert not ApiToken.objects.exists()


def test_an_admin_revokes_tokens_in_bulk(db, user, admin_client):
    first, key = api_token_create(user=user, name="one")
    second, _ = api_token_create(user=user, name="two")
    response = admin_client.post(
        "/admin/core/apitoken/",
        {"action": "revoke", "_selected_action": [first.pk, second.pk]},
        follow=True,
    )
    assert "Revoked 2 tokens." in response.content.decode()
    assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 0
    assert ApiClient(token=key).get("/api/v1/memories").status_code == 401
