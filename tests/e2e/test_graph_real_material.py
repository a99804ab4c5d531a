"""The topology page on real documents nobody on the team wrote (bench/topology_corpus.py: Enron mail,
weblogs and newsgroup posts in English, German news): labels at first paint do not overlap at 1280 or
390 px, isolated entities are hidden behind a count, and the phone opens on the list of clusters.

Skipped unless the corpus has been built (KYBERNESIS_TOPOLOGY_CORPUS, /work/corpus/topology by default).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from graph.services import graph_extract_memories, memory_links_refresh
from memories.services import MemoryInput, memory_create_many
from tests.e2e.test_graph import sign_in
from tests.e2e.test_graph_readable import FIRST_PAINT, LABEL_OVERLAPS
from tests.factories import UserFactory

CORPUS = Path(os.environ.get("KYBERNESIS_TOPOLOGY_CORPUS", "/work/corpus/topology"))

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not (CORPUS / "manifest.json").exists(), reason=f"no topology corpus at {CORPUS}"),
]


def load_corpus(user) -> int:
    manifest = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
    items = [
        MemoryInput(title=Path(doc["file"]).stem, content=(CORPUS / doc["file"]).read_text(encoding="utf-8"))
        for doc in manifest
    ]
    memories = memory_create_many(owner=user, items=items)
    graph_extract_memories(memory_ids=[m.pk for m in memories])
    memory_links_refresh(owner=user)
    return len(memories)


def test_real_documents_read_at_first_paint_on_a_desktop_and_a_phone(browser, live_server, artifacts):
    user = UserFactory()
    assert load_corpus(user) >= 30
    shots = artifacts / "topology-real"
    shots.mkdir(exist_ok=True)
    for width in (1280, 390):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(60_000)
        sign_in(page, user)
        page.goto("/graph/")
        page.screenshot(path=str(shots / f"graph-{width}.png"), full_page=True)
        if width == 390:
            # The phone opens on the list of clusters; the drawing is one tap away.
            assert page.locator("#graph-list").is_visible()
            assert not page.locator("#cy").is_visible()
            page.click("#graph-mode-drawing")
        page.wait_for_selector("#cy[data-ready=true]")
        page.screenshot(path=str(shots / f"graph-drawing-{width}.png"), full_page=True)
        labels = page.evaluate(LABEL_OVERLAPS.replace("[kind = 'memory']", ""))
        assert labels["overlaps"] == 0 and labels["labelled"] >= (12 if width == 1280 else 5), labels
        assert page.evaluate("window.kybernesisGraph.nodes('.isolated:visible').length") == 0
        parts = page.evaluate(
            "() => window.kybernesisGraph.elements(':visible').not('[kind = \"cluster\"]').components()"
            ".map((c) => c.nodes().length).sort((a, b) => b - a).slice(0, 3)"
        )
        print(
            f"real documents at {width} px:", page.evaluate(FIRST_PAINT), labels, "largest components:", parts
        )  # quoted in docs/features/graph.md
        context.close()
