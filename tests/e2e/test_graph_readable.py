"""The graph reads at first paint: salient labels visible, isolated nodes around the components, the
memory view with its link edges and labels that do not overlap, and 0, 1 or 2,000 nodes drawn."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.utils import timezone

from bench.management.commands.bench_organise import read_set
from graph.models import Entity
from graph.services import graph_extract_memories, memory_links_refresh
from memories.services import MemoryInput, memory_create_many
from tests.e2e.test_graph import sign_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SET = Path(__file__).resolve().parents[2] / "bench" / "data" / "organise"

SALIENT_LABEL_PX = """
() => {
  const cy = window.kybernesisGraph;
  return cy.nodes(".salient").map((n) => parseFloat(n.style("font-size")) * cy.zoom());
}
"""
ISOLATED_AROUND = """
() => {
  const cy = window.kybernesisGraph;
  const connected = cy.nodes().filter((n) => n.degree() > 0 && !n.isParent());
  const alone = cy.nodes().filter((n) => n.degree() === 0 && !n.isParent() && !n.isChild());
  const box = connected.boundingBox();
  const cx = (box.x1 + box.x2) / 2, cyy = (box.y1 + box.y2) / 2;
  const sides = new Set(alone.map((n) => {
    const p = n.position();
    return (p.x < cx ? "w" : "e") + (p.y < cyy ? "n" : "s");
  }));
  return { alone: alone.length, sides: sides.size };
}
"""
LABEL_OVERLAPS = """
() => {
  const cy = window.kybernesisGraph;
  const boxes = cy.nodes(".salient[kind = 'memory']").map((n) => n.boundingBox({ includeLabels: true, includeOverlays: false }));
  let overlaps = 0;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2) overlaps++;
  }
  return { labelled: boxes.length, overlaps };
}
"""


def seed_collection(user) -> list[int]:
    notes, _ = read_set(SET)
    memories = memory_create_many(owner=user, items=[MemoryInput(title=t, content=c) for t, c in notes.values()])
    ids = [m.pk for m in memories]
    graph_extract_memories(memory_ids=ids)
    memory_links_refresh(owner=user)
    return ids


def test_a_collection_reads_at_first_paint_in_both_views(page, artifacts):
    user = UserFactory()
    seed_collection(user)
    sign_in(page, user)

    page.goto("/graph/")
    page.wait_for_selector("#cy[data-ready=true]")
    sizes = page.evaluate(SALIENT_LABEL_PX)
    # Readable without zooming: about 11 px; the force layout is seeded at random, so the fitted zoom
    # (and with it the rendered size) varies a little from run to run.
    assert len(sizes) >= 15 and min(sizes) >= 10
    labels = page.evaluate(LABEL_OVERLAPS.replace("[kind = 'memory']", ""))
    assert labels["overlaps"] == 0
    around = page.evaluate(ISOLATED_AROUND)
    assert around["alone"] == 0 or around["sides"] >= 3  # not a block under the components
    page.screenshot(path=str(artifacts / "graph-entities-first-paint.png"))

    page.goto("/graph/?view=memories")
    page.wait_for_selector("#cy[data-ready=true]")
    assert page.evaluate("window.kybernesisGraph.edges().length") >= 20
    labels = page.evaluate(LABEL_OVERLAPS)
    assert labels["labelled"] >= 10 and labels["overlaps"] == 0
    page.screenshot(path=str(artifacts / "graph-memories-first-paint.png"))


@pytest.mark.parametrize("count", [0, 1, 2000])
def test_the_page_draws_0_1_and_2000_isolated_nodes(page, artifacts, count):
    user = UserFactory()
    now = timezone.now()
    Entity.objects.bulk_create(
        Entity(
            owner=user,
            name=f"Thing {i:04d}",
            key=f"thing {i:04d}",
            type="concept",
            salience=(i % 97) / 97,
            mention_count=1,
            memory_count=1,
            first_seen=now,
            last_seen=now,
        )
        for i in range(count)
    )
    sign_in(page, user)
    page.goto(f"/graph/?limit={max(count, 1)}")
    if count == 0:
        assert "Nothing to draw yet" in page.content()
        return
    page.wait_for_selector("#cy[data-ready=true]", timeout=60_000)
    assert page.evaluate("window.kybernesisGraph.nodes().length") == count
    if count == 2000:
        around = page.evaluate(ISOLATED_AROUND)
        assert around["sides"] == 4
        page.screenshot(path=str(artifacts / "graph-2000-isolated.png"))
