"""The API tokens page in a browser, at a desktop's and a phone's width: create a read-only token with an
expiry, copy its key, see it listed, use it, revoke it after the confirmation."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import ApiToken
from tests.conftest import ApiClient
from tests.e2e.test_pages_everywhere import sign_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_create_use_and_revoke_a_token(browser, live_server, artifacts, width):
    user = UserFactory()
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, user)
    page.goto("/accounts/email/")
    page.click(".account-nav >> text=API tokens")
    page.wait_for_url("**/accounts/tokens/")
    assert page.is_checked("input[name=scopes][value=read]") and not page.is_checked("input[name=scopes][value=write]")

    page.fill("input[name=name]", "research agent")
    page.fill("input[name=expires]", (timezone.localdate() + timedelta(days=30)).isoformat())
    page.click("button:has-text('Create token')")
    key = page.locator("#token-key").inner_text().strip()
    assert key.startswith("kyb_")
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("button:has-text('Copy token')")
    page.wait_for_selector("button[data-copy]:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == key
    assert page.locator(".token-item", has_text="research agent").locator(".badge.scope-read").count() == 1
    page.screenshot(path=str(artifacts / f"api-tokens-created-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    client = ApiClient(token=key)
    assert client.get("/api/v1/memories").status_code == 200
    assert client.post("/api/v1/memories", {"content": "not allowed"}).status_code == 403

    page.goto("/accounts/tokens/")
    assert key not in page.content()
    assert "just now" in page.locator(".token-item", has_text="research agent").inner_text()  # its last use
    page.click("a[aria-label='Revoke the token research agent']")
    page.wait_for_url("**/revoke/")
    page.screenshot(path=str(artifacts / f"api-token-revoke-{width}.png"), full_page=True)
    page.click("button:has-text('Yes, revoke it')")
    page.wait_for_url("**/accounts/tokens/")
    assert "Revoked the token “research agent”" in page.inner_text(".messages")
    assert page.locator(".token-item", has_text="research agent").locator(".token-state-revoked").count() == 1
    assert ApiToken.objects.get(user=user).revoked_at is not None
    assert client.get("/api/v1/memories").status_code == 401
    context.close()
