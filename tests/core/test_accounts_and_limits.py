"""Accounts and rate limits: sign-up can be closed or invite-only, sign-up does not tell which
addresses have accounts, failed sign-ins lock out through the cache every process shares, and the
API answers 429 with Retry-After over its rate."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.cache import cache
from django.db import connection

pytestmark = pytest.mark.django_db

PASSWORD = "a-Long-passphrase-42"
User = get_user_model()


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def _sign_up(client, email: str):
    return client.post("/accounts/signup/", {"email": email, "password1": PASSWORD, "password2": PASSWORD})


def test_closed_sign_up_creates_no_account(client, settings):
    settings.KYBERNESIS_SIGNUP = "closed"
    page = client.get("/accounts/signup/")
    assert "closed" in page.content.decode().lower()
    _sign_up(client, "new@example.org")
    assert not User.objects.filter(email="new@example.org").exists()


def test_invite_only_sign_up_admits_invited_addresses_and_domains(client, settings):
    settings.KYBERNESIS_SIGNUP = "invite"
    settings.KYBERNESIS_SIGNUP_INVITES = ["ada@example.org", "@team.example"]
    refused = _sign_up(client, "eve@example.org")
    assert refused.status_code == 200 and "by invitation" in refused.content.decode()
    assert not User.objects.filter(email="eve@example.org").exists()
    assert _sign_up(client, "ada@example.org").status_code == 302
    client.logout()
    assert _sign_up(client, "bob@team.example").status_code == 302
    assert set(User.objects.values_list("email", flat=True)) == {"ada@example.org", "bob@team.example"}


def test_sign_up_does_not_reveal_a_registered_address_with_mandatory_verification(client, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    from django.test import Client

    taken = Client()
    _sign_up(taken, "taken@example.org")
    mail.outbox.clear()

    fresh_response = _sign_up(Client(), "fresh@example.org")
    taken_response = _sign_up(Client(), "taken@example.org")

    assert fresh_response.status_code == taken_response.status_code == 302
    assert fresh_response["Location"] == taken_response["Location"]
    assert User.objects.filter(email="taken@example.org").count() == 1
    # The new address is asked to confirm by mail; both land on the same "check your mail" page.
    assert "fresh@example.org" in [m.to[0] for m in mail.outbox]


def test_sign_in_does_not_reveal_whether_an_address_has_an_account(client, user):
    user.email = "known@example.org"
    user.set_password(PASSWORD)
    user.save()
    known = client.post("/accounts/login/", {"login": "known@example.org", "password": "wrong-password-1"})
    unknown = client.post("/accounts/login/", {"login": "nobody@example.org", "password": "wrong-password-1"})
    assert known.status_code == unknown.status_code == 200
    errors = [str(e) for e in known.context["form"].non_field_errors()]
    assert errors == [str(e) for e in unknown.context["form"].non_field_errors()]


def test_failed_sign_ins_lock_the_account_out_through_the_shared_cache(client, user, settings):
    user.email = "locked@example.org"
    user.set_password(PASSWORD)
    user.save()
    for _ in range(5):
        client.post("/accounts/login/", {"login": "locked@example.org", "password": "wrong-password-1"})
    # Even the right password is refused now.
    response = client.post("/accounts/login/", {"login": "locked@example.org", "password": PASSWORD})
    assert "_auth_user_id" not in client.session
    assert response.status_code in (200, 429)
    assert "too many" in response.content.decode().lower()
    # The counts live in the database cache table, which every web process reads.
    assert settings.CACHES["default"]["BACKEND"].endswith("DatabaseCache")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {settings.CACHES['default']['LOCATION']}")
        assert cursor.fetchone()[0] > 0


def test_the_api_answers_429_with_retry_after_over_its_rate(api, settings):
    settings.KYBERNESIS_API_RATE = "3/m"
    statuses = [api.get("/api/v1/memories").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = api.get("/api/v1/memories")
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 2 * 60  # a sliding minute: into the next one at most
    assert "detail" in response.json()


def test_the_api_rate_is_per_account(api, other_api, settings):
    settings.KYBERNESIS_API_RATE = "2/m"
    assert [api.get("/api/v1/memories").status_code for _ in range(3)] == [200, 200, 429]
    assert other_api.get("/api/v1/memories").status_code == 200


def test_the_per_address_rate_covers_every_account_of_one_client(api, other_api, settings):
    settings.KYBERNESIS_API_ADDRESS_RATE = "3/m"
    statuses = [client.get("/api/v1/memories").status_code for client in (api, other_api, api, other_api)]
    assert statuses == [200, 200, 200, 429]


def test_the_sign_in_message_names_the_email_address_not_a_derived_username(client):
    response = _sign_up(client, "ada.lovelace@example.org")
    page = client.get(response["Location"]).content.decode()
    assert "Successfully signed in as ada.lovelace@example.org." in page


def test_account_mails_name_kybernesis_and_this_host_not_the_default_site(client, user, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client.post("/accounts/password/reset/", {"email": user.email})
    [message] = mail.outbox
    assert message.subject.startswith("[Kybernesis] ")
    assert "example.com" not in message.subject + message.body.replace(user.email, "")
    assert "Kybernesis" in message.body and "http://testserver/accounts/password/reset/key/" in message.body
