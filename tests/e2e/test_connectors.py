"""A person connects Google Drive through the (fake) Google consent redirect, syncs, and reads the items."""

from __future__ import annotations

import pytest

from tests.connectors.conftest import fake_google, waits  # noqa: F401 - fixtures used below
from tests.e2e.conftest import sign_up
from tests.fakes.google_drive import DOC
from tests.files import make_pdf

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_connect_google_drive_sync_now_and_browse_the_items(page, artifacts, fake_google):  # noqa: F811
    fake_google.add_file("Roadmap", DOC, exports={"text/plain": b"Ship connectors in March."})
    fake_google.add_file("Report.pdf", "application/pdf", make_pdf(["Revenue grew in every region."]))
    fake_google.add_file("broken.pdf", "application/pdf", b"%PDF-1.4 truncated")
    fake_google.add_file("holiday.png", "image/png", b"\x89PNG")

    sign_up(page, "grace@example.com")

    page.click("nav >> text=Connectors")
    page.wait_for_url("**/connectors/")
    page.click("text=Connect Google Drive")  # off to the fake consent screen, which approves at once
    page.wait_for_url("**/connectors/")
    assert page.locator(".badge.status-ready").inner_text() == "Ready to sync"

    page.click("text=Sync now")
    page.wait_for_url("**/connectors/")
    assert page.locator(".badge.status-synced").inner_text() == "Synced"
    page.screenshot(path=str(artifacts / "connectors-list.png"), full_page=True)

    page.click("text=Items")
    page.wait_for_selector("table.items")
    assert page.locator("table.items tbody tr").count() == 4
    assert "damaged or truncated" in page.locator("table.items").inner_text()
    page.screenshot(path=str(artifacts / "connectors-detail.png"), full_page=True)

    page.goto("/connectors/")
    page.click("summary:has-text('Disconnect')")
    page.screenshot(path=str(artifacts / "connectors-disconnect.png"), full_page=True)
    page.check("input[name=memories][value=keep]")
    page.click("form[action$='/disconnect/'] button[type=submit]")
    page.wait_for_url("**/connectors/")
    assert "Its synced memories are kept" in page.content()
