"""The pages pass their Content-Security-Policy in a real browser: no script, style or form action is
refused on any page, and the behaviours moved out of inline handlers still work."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import sign_up

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PAGES = [
    "/memories/",
    "/memories/new/",
    "/upload/",
    "/search/?q=budget",
    "/chat/",
    "/graph/",
    "/connectors/",
    "/sleep/",
    "/memories/tags/",
    "/memories/trash/",
    "/api/v1/docs",
]


def test_no_page_breaks_its_content_security_policy(page, artifacts):
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(f"{page.url}: {message.text}") if "Content Security Policy" in message.text else None
        ),
    )
    sign_up(page, "csp@example.com")
    page.goto("/memories/new/")
    page.fill("textarea[name=content]", "Alice Smith reviewed the quarterly budget with Bob Jones in Paris.")
    page.click("main form.stacked button[type=submit]")
    page.wait_for_url("**/memories/*/")
    memory_url = page.url
    for path in [*PAGES, memory_url]:
        page.goto(path)
        page.wait_for_load_state("networkidle")
    page.goto("/api/v1/docs")
    page.wait_for_selector(".swagger-ui .info", timeout=30_000)
    page.screenshot(path=str(artifacts / "csp-api-docs.png"))

    # The priority slider shows its value, from a script file (the policy refuses an inline oninput).
    page.goto(memory_url)
    page.screenshot(path=str(artifacts / "csp-memory-detail.png"), full_page=True)
    page.locator("input[type=range][name=priority]").fill("0.9")
    assert page.locator("form.priority-form output").text_content() == "0.90"
    # Deleting asks first, from a script file (no inline onsubmit): dismissing keeps the memory.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("form[data-confirm] button[type=submit]")
    assert page.url == memory_url
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("form[data-confirm] button[type=submit]")
    page.wait_for_url("**/memories/")

    assert violations == []
