"""History and activity in the browser: a person edits a memory, compares two versions, restores one
after the confirmation, and reads the trails, at phone and desktop widths (no overflow, axe clean)."""

from __future__ import annotations

import pytest

from memories import services
from memories.models import Memory
from tests.e2e.test_pages_everywhere import check_page, sign_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The opening of the Django tutorial's first part, as a person might keep it (a public document).
FIRST = (
    "Writing your first Django app, part 1\n\n"
    "Let's learn by example.\n\n"
    "Throughout this tutorial, we'll walk you through the creation of a basic poll application. "
    "It'll consist of two parts: a public site that lets people view polls and vote in them, and an "
    "admin site that lets you add, change, and delete polls.\n\n"
    "We'll assume you have Django installed already."
)
SECOND = FIRST.replace("a basic poll application", "a small voting application").replace(
    "We'll assume you have Django installed already.", "We'll assume Django 5.2 is installed already."
)


def test_a_person_edits_compares_restores_and_reads_the_trail(browser, live_server, artifacts):
    user = UserFactory()
    memory = services.memory_create(owner=user, title="Django tutorial, part 1", content=FIRST, manual_tags=["django"])
    problems: list[str] = []
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, user)
    page.goto(f"/memories/{memory.pk}/edit/")
    page.fill("textarea[name=content]", SECOND)
    page.get_by_role("button", name="Save changes").click()
    page.wait_for_url(f"**/memories/{memory.pk}/")
    page.locator("#history-panel").wait_for()
    assert "Version 2" in page.locator("#history-panel").inner_text()
    assert user.username in page.locator("#activity-panel").inner_text()
    problems += check_page(page, artifacts, "memory-history-panels", 1280)

    page.goto(f"/memories/{memory.pk}/history/")
    page.fill("input[name=a]", "1")
    page.fill("input[name=b]", "2")
    page.click(".compare-form button[type=submit]")
    page.locator("#compare .diff-card").wait_for()
    assert page.locator("#compare ins").first.inner_text() in ("small voting", "a small voting")
    problems += check_page(page, artifacts, "memory-history-compare", 1280)

    page.goto(f"/memories/{memory.pk}/history/1/restore/")
    problems += check_page(page, artifacts, "memory-version-restore", 1280)
    page.click("text=Yes, restore version 1")
    page.wait_for_url(f"**/memories/{memory.pk}/")
    assert "Restored version 1" in page.inner_text("body")
    assert Memory.objects.get(pk=memory.pk).content == FIRST
    context.close()

    for width in (390, 1280):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        sign_in(page, user)
        for name, path in (
            ("memory-history", f"/memories/{memory.pk}/history/?a=2&b=3"),
            ("memory-version", f"/memories/{memory.pk}/history/2/"),
            ("account-activity", "/memories/activity/"),
        ):
            page.goto(path)
            problems += check_page(page, artifacts, name, width)
        page.goto(f"/memories/{memory.pk}/")
        page.locator("#activity-panel").wait_for()
        problems += check_page(page, artifacts, "memory-history-panels", width)
        context.close()
    assert not problems, "\n".join(problems)
