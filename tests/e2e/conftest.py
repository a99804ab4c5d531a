"""Browser tests: Playwright for Python driving Debian's chromium against pytest-django's live server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("KYBERNESIS_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make are still
# plain synchronous calls, so Django's async-safety guard is relaxed for these tests only.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(config, items):
    if Path(CHROMIUM).exists() or shutil.which(CHROMIUM):
        return
    if os.environ.get("CI"):
        raise pytest.UsageError(f"{CHROMIUM} is missing; `make test` installs Debian's chromium package")
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is not installed (make test installs it)")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def _fresh_rate_limits(request):
    """Sign-in counts live in the database cache table, which no test's flush empties: the suite signs
    in from one address more often than allauth's 30 a minute, so each browser test starts without
    the counts of the tests before it (a busy run otherwise got a 429 page instead of /memories/)."""
    if "live_server" in request.fixturenames:
        request.getfixturevalue("live_server")
        from django.core.cache import cache

        cache.clear()
    yield


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def sign_up(page, email: str, password: str = "a-Long-passphrase-42") -> None:
    """Create an account through the sign-up page; it lands on the memory list."""
    page.goto("/accounts/signup/")
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", password)
    page.fill("input[name=password2]", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/memories/")
