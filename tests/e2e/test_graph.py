"""A person opens the graph with seeded memories, clicks a node, reads the side panel, and opens a memory."""

from __future__ import annotations

import pytest

from graph.services import graph_extract_memories, memory_links_refresh
from tests.factories import UserFactory, make_memory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"

NODE_POSITION = """
([label]) => {
  const cy = window.kybernesisGraph;
  const node = cy.nodes().filter((n) => n.data("label") === label)[0];
  const box = cy.container().getBoundingClientRect();
  const p = node.renderedPosition();
  return { x: box.left + p.x, y: box.top + p.y };
}
"""


def sign_in(page, user):
    page.goto("/accounts/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/memories/")


def test_graph_page_draws_nodes_and_opens_the_side_panel(page, artifacts):
    user = UserFactory()
    memories = [
        make_memory(user, text, manual_tags=tags)
        for text, tags in (
            ("Alice works with the Product Team, which is based in San Francisco.", ["team"]),
            ("Alice presented the roadmap. The Product Team uses Django and PostgreSQL.", ["team"]),
            ("Bob joined the Design Team in Berlin.", ["design"]),
        )
    ]
    graph_extract_memories(memory_ids=[m.pk for m in memories])
    memory_links_refresh(owner=user)
    sign_in(page, user)

    page.click("nav >> text=Graph")
    page.wait_for_selector("#cy[data-ready=true]")
    assert page.evaluate("window.kybernesisGraph.nodes().length") >= 6
    assert page.evaluate("window.kybernesisGraph.edges().length") >= 2
    page.screenshot(path=str(artifacts / "graph-entities.png"), full_page=True)

    point = page.evaluate(NODE_POSITION, ["Alice"])
    page.mouse.click(point["x"], point["y"])
    panel = page.locator("#graph-panel .entity-panel")
    panel.wait_for()
    assert "Alice" in panel.locator(".panel-title").inner_text()
    assert panel.locator(".entity-memories li").count() == 2
    assert "works with" in panel.locator(".entity-relationships").inner_text()
    page.screenshot(path=str(artifacts / "graph-side-panel.png"), full_page=True)

    page.fill("input[name=q]", "berlin")
    page.click(".graph-filters button[type=submit]")
    page.wait_for_selector("#cy[data-ready=true]")
    page.locator("#graph-panel .entity-panel .panel-title", has_text="Berlin").wait_for()
    assert page.evaluate("window.kybernesisGraph.$(':selected').data('label')") == "Berlin"

    page.goto("/graph/?view=memories")
    page.wait_for_selector("#cy[data-ready=true]")
    assert page.evaluate("window.kybernesisGraph.nodes('[kind = \"memory\"]').length") == 3
    page.screenshot(path=str(artifacts / "graph-memories.png"), full_page=True)

    page.goto(f"/memories/{memories[0].pk}/")
    page.locator("#memory-graph .entity-badges").wait_for()
    assert "San Francisco" in page.locator("#memory-graph").inner_text()
    page.screenshot(path=str(artifacts / "memory-detail-graph.png"), full_page=True)
