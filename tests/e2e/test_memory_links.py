"""A person opens a memory and reads why each related memory is linked: the rare names and tags it
shares, with their weights, and how close the meaning is; on a desktop and on a phone."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.services import graph_extract_memories, memory_links_refresh
from tests.factories import UserFactory, make_memory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
NOTES = Path(__file__).resolve().parents[2] / "bench" / "data" / "organise" / "memories"


def note(name: str) -> tuple[str, str]:
    first, _, body = (NOTES / f"{name}.md").read_text(encoding="utf-8").strip().partition("\n")
    return first.lstrip("# ").strip(), body.strip()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_memory_page_says_why_each_related_memory_is_linked(browser, live_server, artifacts, width):
    user = UserFactory()
    user.set_password(PASSWORD)
    user.save()
    names = ["pg-autovacuum", "pg-backup", "pg-migration", "pg-vector-index", "llm-rag", "coffee-beans"]
    names += ["run-long-run", "japan-kyoto", "fin-budget", "garden-tomatoes", "team-hiring", "k8s-helm"]
    memories = {name: make_memory(user, note(name)[1], title=note(name)[0]) for name in names}
    graph_extract_memories(memory_ids=[m.pk for m in memories.values()])
    memory_links_refresh(owner=user)

    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/memories/")

    page.goto(f"/memories/{memories['pg-vector-index'].pk}/")
    related = page.locator("#memory-graph ul.related")
    related.wait_for()
    why = related.locator(".link-why li")
    assert why.count() >= 1
    text = related.inner_text()
    assert "similar meaning 0." in text.lower()
    assert "Shares " in text and "pgvector (1.0)" in text  # each shared name with its weight
    # Nothing but a near-duplicate scores 1.00.
    assert all(score.strip() != "· 1.00" for score in related.locator(".link-score").all_inner_texts())
    # On a phone the reasons wrap inside the page instead of widening it.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.locator("#memory-graph").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"memory-related-why-{width}.png"), full_page=True)
    context.close()
