"""Graph pages: the topology page, the entity panel, the memory panel; owner isolation and bad filters."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graph.models import Entity
from graph.services import graph_extract_memories, memory_links_refresh
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def spec_graph(user):
    memory = make_memory(user, "Alice works with the Product Team, which is based in San Francisco.")
    other = make_memory(user, "Alice works with the Product Team on the launch plan.")
    graph_extract_memories(memory_ids=[memory.pk, other.pk])
    memory_links_refresh(owner=user)
    return memory


def page_graph(response) -> dict:
    html = response.content.decode()
    start = html.index('<script id="graph-data" type="application/json">') + len(
        '<script id="graph-data" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


def test_topology_page_embeds_the_graph_and_links_the_vendored_cytoscape(logged_in_client, spec_graph):
    response = logged_in_client.get("/graph/")
    assert response.status_code == 200
    assert b"vendor/cytoscape/cytoscape-3.35.0.min.js" in response.content
    assert {"Alice", "Product Team", "San Francisco"} <= {n["label"] for n in page_graph(response)["nodes"]}
    assert b'href="/graph/"' in response.content  # the nav link


def test_search_centres_on_the_entity(logged_in_client, spec_graph, user):
    response = logged_in_client.get("/graph/", {"q": "san francisco"})
    data = page_graph(response)
    assert data["centre"] == f"e{Entity.objects.get(owner=user, key='san francisco').pk}"
    assert b"Centred on" in response.content
    missing = logged_in_client.get("/graph/", {"q": "atlantis"})
    assert b"No entity matches" in missing.content


def test_show_more_appears_when_the_cap_cuts_nodes(logged_in_client, spec_graph):
    response = logged_in_client.get("/graph/", {"limit": 2})
    assert len(page_graph(response)["nodes"]) == 2
    assert b"Show more" in response.content and b"limit=152" in response.content


def test_bad_filters_show_a_message_not_a_500(logged_in_client, spec_graph):
    response = logged_in_client.get("/graph/", {"min_weight": "7", "type": "spaceship"})
    assert response.status_code == 422
    assert b'class="alert"' in response.content


def test_entity_panel_lists_memories_with_the_passage_and_relationships(logged_in_client, spec_graph, user):
    alice = Entity.objects.get(owner=user, key="alice")
    response = logged_in_client.get(f"/graph/entities/{alice.pk}/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "<mark>Alice</mark>" in html and "works with" in html and "Product Team" in html
    assert "<html" in logged_in_client.get(f"/graph/entities/{alice.pk}/").content.decode()


def test_memory_detail_loads_the_memory_panel_with_entities_and_related_memories(logged_in_client, spec_graph):
    detail = logged_in_client.get(f"/memories/{spec_graph.pk}/").content.decode()
    assert f'hx-get="/graph/memories/{spec_graph.pk}/panel/"' in detail
    panel = logged_in_client.get(f"/graph/memories/{spec_graph.pk}/panel/", HTTP_HX_REQUEST="true").content.decode()
    assert "San Francisco" in panel and "Alice works with the Product Team on the launch plan." in panel


def test_another_users_graph_pages_are_404_and_their_graph_is_not_shown(spec_graph, user, other_user):
    client = Client()
    client.force_login(other_user)
    alice = Entity.objects.get(owner=user, key="alice")
    assert page_graph(client.get("/graph/"))["nodes"] == []
    assert client.get(f"/graph/entities/{alice.pk}/").status_code == 404
    assert client.get(f"/graph/memories/{spec_graph.pk}/panel/").status_code == 404
    assert (
        b"Alice"
        not in client.get("/graph/", {"q": "alice"})
        .content.split(b'<main id="main" tabindex="-1">')[1]
        .split(b'name="q"')[0]
    )


def test_graph_pages_need_sign_in(client):
    assert client.get("/graph/").status_code == 302


def test_entity_page_shows_the_other_ways_it_is_written(logged_in_client, user):
    """Aliases are keys ("priya"); the page shows the names as the memories write them."""
    first = make_memory(user, "Priya Nair sent the Postgres upgrade runbook.")
    second = make_memory(user, "Lunch with Priya on Thursday to talk about the migration plan.")
    graph_extract_memories(memory_ids=[first.pk, second.pk])
    from graph.services.upkeep import person_aliases_merge

    priya = Entity.objects.get(owner=user, key="priya nair")
    person_aliases_merge(owner_id=user.pk, entity_ids={priya.pk})
    html = logged_in_client.get(f"/graph/entities/{priya.pk}/").content.decode()
    assert "Also written: Priya<" in html and "priya<" not in html
    postgres = Entity.objects.get(owner=user, key="postgresql")  # written only as it is named
    assert "Also written" not in logged_in_client.get(f"/graph/entities/{postgres.pk}/").content.decode()


def test_a_focus_on_an_entity_with_no_link_says_so(logged_in_client, spec_graph, user):
    """A walk-through centred on AeroPress read "Showing 1 linked entity in 0 clusters" and found it
    under "Linked, in no cluster"."""
    lone = make_memory(user, "Finally got an AeroPress for the office.")
    graph_extract_memories(memory_ids=[lone.pk])
    html = logged_in_client.get("/graph/", {"q": "AeroPress"}).content.decode()
    assert "<b>AeroPress</b> has no link to another entity yet." in html
    assert "Showing 1 linked" not in html and "Linked, in no cluster" not in html and "With no link yet" in html
    assert "The 1 linked entity" not in html and "The 1 entity by cluster" in html


def test_the_hidden_count_says_what_it_becomes_when_shown(logged_in_client, spec_graph, user):
    lone = make_memory(user, "Finally got an AeroPress for the office.")
    graph_extract_memories(memory_ids=[lone.pk])
    html = logged_in_client.get("/graph/").content.decode()
    assert 'data-shown="1 with no link to them is shown.">1 with no link to them is hidden.' in html
