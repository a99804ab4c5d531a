"""Connector fixtures: the fake Google and Notion servers on 127.0.0.1, settings pointing at them,
recorded (never slept) backoff waits, and connected accounts for a user."""

from __future__ import annotations

from datetime import timedelta

import pytest
from allauth.socialaccount.models import SocialAccount, SocialApp, SocialToken
from django.contrib.sites.models import Site
from django.utils import timezone

from connectors import services
from connectors.providers import client as provider_client
from tests.fakes.google_drive import FakeGoogle
from tests.fakes.notion import FakeNotion


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """Every backoff wait the connectors ask for, in seconds; nothing actually sleeps."""
    recorded: list[float] = []
    monkeypatch.setattr(provider_client, "sleep", recorded.append)
    return recorded


@pytest.fixture
def fake_google(settings, waits):
    server = FakeGoogle().start()
    settings.KYBERNESIS_GOOGLE_ACCOUNTS_URL = server.url
    settings.KYBERNESIS_GOOGLE_OAUTH_URL = server.url
    settings.KYBERNESIS_GOOGLE_API_URL = server.url
    providers = {key: dict(value) for key, value in settings.SOCIALACCOUNT_PROVIDERS.items()}
    # Configured the way KYBERNESIS_GOOGLE_CLIENT_ID/SECRET configure it.
    providers["google"]["APPS"] = [{"client_id": server.client_id, "secret": server.client_secret, "key": ""}]
    settings.SOCIALACCOUNT_PROVIDERS = providers
    yield server
    server.stop()


@pytest.fixture
def fake_notion(settings, waits, db):
    server = FakeNotion().start()
    settings.KYBERNESIS_NOTION_API_URL = server.url
    # Configured the other supported way: a SocialApp row added in admin.
    app = SocialApp.objects.create(
        provider="notion", name="Notion", client_id=server.client_id, secret=server.client_secret
    )
    app.sites.add(Site.objects.get_current())
    yield server
    server.stop()


def connect_google(user, fake: FakeGoogle, who: str = "alice", *, expires_in: int = 3600):
    """A connector as the OAuth flow leaves it (the flow itself is tested in test_oauth.py)."""
    drive = fake.drive(who)
    tokens = fake.issue_tokens(who, expires_in=expires_in)
    social = SocialAccount.objects.create(
        user=user, provider="google", uid=drive.sub, extra_data={"email": drive.email, "name": drive.name}
    )
    SocialToken.objects.create(
        account=social,
        token=tokens["access_token"],
        token_secret=tokens["refresh_token"],
        expires_at=timezone.now() + timedelta(seconds=expires_in),
    )
    return services.connector_account_connect(user=user, social_account=social)


def connect_notion(user, fake: FakeNotion, workspace: str = "acme"):
    social = SocialAccount.objects.create(
        user=user,
        provider="notion",
        uid=f"user-{user.pk}_workspace-{workspace}",
        extra_data={"workspace_name": workspace.title(), "owner": {"user": {"name": "Ada"}}},
    )
    SocialToken.objects.create(
        account=social, token=fake.issue_token(workspace), app=SocialApp.objects.get(provider="notion")
    )
    return services.connector_account_connect(user=user, social_account=social)


@pytest.fixture
def drive_account(user, fake_google):
    return connect_google(user, fake_google)


@pytest.fixture
def notion_account(user, fake_notion):
    return connect_notion(user, fake_notion)


def sync(account):
    """Run a sync the way the worker does and return the account as it was left."""
    from connectors.tasks import sync_account

    sync_account(account.pk)
    account.refresh_from_db()
    return account
