"""Graph API: the graph for the page, entities, relationships; owner isolation and 422s."""

from __future__ import annotations

import pytest

from graph.models import Entity, Relationship
from graph.services import graph_extract_memories, memory_links_refresh
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

SPEC_EXAMPLE = "Alice works with the Product Team, which is based in San Francisco."


@pytest.fixture
def spec_graph(user):
    memory = make_memory(user, SPEC_EXAMPLE, manual_tags=["team"])
    other = make_memory(user, "Alice works with the Product Team on the launch plan.", manual_tags=["team"])
    graph_extract_memories(memory_ids=[memory.pk, other.pk])
    memory_links_refresh(owner=user)
    return memory


def test_graph_returns_nodes_and_edges_ready_for_the_page(api, spec_graph):
    response = api.get("/api/v1/graph")
    assert response.status_code == 200, response.content
    body = response.json()
    labels = {n["label"]: n for n in body["nodes"]}
    assert labels["Alice"]["type"] == "person" and labels["Alice"]["id"].startswith("e")
    edge_types = {(e["source"], e["relationType"], e["target"]) for e in body["edges"]}
    assert (labels["Alice"]["id"], "works_with", labels["Product Team"]["id"]) in edge_types
    assert body["total"] >= 3 and body["truncated"] is False


def test_graph_limit_caps_the_nodes_and_says_it_truncated(api, spec_graph):
    body = api.get("/api/v1/graph", {"limit": 2}).json()
    assert len(body["nodes"]) == 2 and body["truncated"] is True and body["total"] > 2


def test_graph_filters_by_type_memory_and_entity(api, spec_graph, user):
    body = api.get("/api/v1/graph", {"types": "person,location"}).json()
    assert {n["type"] for n in body["nodes"]} <= {"person", "location"}
    alice = Entity.objects.get(owner=user, key="alice")
    body = api.get("/api/v1/graph", {"entityId": alice.pk}).json()
    assert body["centre"] == f"e{alice.pk}"
    assert "Product Team" in {n["label"] for n in body["nodes"]}
    body = api.get("/api/v1/graph", {"memoryId": spec_graph.pk}).json()
    assert "San Francisco" in {n["label"] for n in body["nodes"]}


def test_memory_view_has_memories_links_and_tag_clusters(api, spec_graph):
    body = api.get("/api/v1/graph", {"view": "memories"}).json()
    kinds = {n["kind"] for n in body["nodes"]}
    assert {"memory", "tag"} <= kinds
    assert body["edges"] and {e["reason"] for e in body["edges"]} <= {"shared_entities", "shared_tags", "semantic"}
    assert all(n["parent"] == "t:team" for n in body["nodes"] if n["kind"] == "memory")


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 2001},
        {"minWeight": 1.5},
        {"minWeight": -0.1},
        {"types": "person,spaceship"},
        {"view": "planets"},
        {"limit": "many"},
    ],
)
def test_out_of_range_graph_parameters_are_422(api, params):
    response = api.get("/api/v1/graph", params)
    assert response.status_code == 422, response.content
    assert response.json()["detail"]


def test_entities_list_and_search(api, spec_graph):
    body = api.get("/api/v1/entities").json()
    assert body["count"] >= 3
    found = api.get("/api/v1/entities", {"q": "product team"}).json()["items"]
    assert [e["name"] for e in found][:1] == ["Product Team"]
    assert api.get("/api/v1/entities", {"types": "galaxy"}).status_code == 422


def test_entity_detail_lists_memories_with_their_chunk_and_relationships(api, spec_graph, user):
    alice = Entity.objects.get(owner=user, key="alice")
    body = api.get(f"/api/v1/entities/{alice.pk}").json()
    assert body["mentionCount"] == 2 and body["memoryCount"] == 2
    assert {m["memoryId"] for m in body["memories"]} >= {spec_graph.pk}
    assert all("Alice" in m["snippet"] and m["chunkId"] for m in body["memories"])
    assert any(
        r["relationType"] == "works_with" and r["target"]["name"] == "Product Team" for r in body["relationships"]
    )


def test_relationships_list_filters(api, spec_graph):
    body = api.get("/api/v1/relationships", {"relationTypes": "located_in"}).json()
    assert [(r["source"]["name"], r["target"]["name"]) for r in body["items"]] == [("Product Team", "San Francisco")]
    assert body["items"][0]["contextMemoryId"] == spec_graph.pk
    assert api.get("/api/v1/relationships", {"relationTypes": "married_to"}).status_code == 422
    assert api.get("/api/v1/relationships", {"minWeight": 2}).status_code == 422


def test_another_users_graph_is_invisible_and_their_ids_are_404(other_api, spec_graph, user):
    alice = Entity.objects.get(owner=user, key="alice")
    assert other_api.get("/api/v1/graph").json()["nodes"] == []
    assert other_api.get("/api/v1/entities").json()["count"] == 0
    assert other_api.get("/api/v1/relationships").json()["count"] == 0
    assert other_api.get(f"/api/v1/entities/{alice.pk}").status_code == 404
    assert other_api.get("/api/v1/graph", {"entityId": alice.pk}).status_code == 404
    assert other_api.get("/api/v1/graph", {"memoryId": spec_graph.pk}).status_code == 404
    assert other_api.get("/api/v1/relationships", {"entityId": alice.pk}).status_code == 404
    assert Relationship.objects.filter(owner=user).exists()


def test_graph_api_needs_authentication(client):
    assert client.get("/api/v1/graph").status_code == 401


def test_tag_filter_is_normalised_like_stored_tags(api, spec_graph):
    body = api.get("/api/v1/graph", {"view": "memories", "tag": " Team "}).json()
    assert len([n for n in body["nodes"] if n["kind"] == "memory"]) == 2
    assert api.get("/api/v1/graph", {"tag": "no-such-tag"}).json()["nodes"] == []
