"""The API docs page renders from the vendored Swagger UI with every non-local request blocked."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.e2e.test_pages_everywhere import AXE, RUN_AXE
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_api_docs_render_their_operations_with_the_network_cut_off(page, artifacts):
    blocked: list[str] = []

    def only_local(route):
        host = urlsplit(route.request.url).hostname
        if host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.context.route("**/*", only_local)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    UserFactory(email="docs@example.com")
    page.goto("/api/v1/docs")
    page.locator(".opblock").first.wait_for()
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/v1/memories" in [p.replace("\u200b", "") for p in paths]
    assert page.locator(".opblock").count() >= 10
    assert blocked == [] and errors == []
    page.locator(".opblock-summary-control").first.click()
    page.locator(".opblock-body").first.wait_for()
    page.screenshot(path=str(artifacts / "api-docs-offline.png"), full_page=False)
    # From the site itself, as a page script would be: the Content-Security-Policy allows no inline script.
    page.add_script_tag(url=f"/static/vendor/axe-core/{AXE.name}")
    violations = page.evaluate(RUN_AXE)
    assert not violations, "\n".join(f"{v['id']}: {v['nodes']}" for v in violations)
