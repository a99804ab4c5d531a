"""The topology's first paint: which entities are sent, how they are clustered, the isolated ones held
back with a count, the list view's sections, and a payload and query count bounded at 20,000 entities."""

from __future__ import annotations

import pytest
from django.utils import timezone

from graph.models import Entity, Relationship
from graph.selectors import GraphQuery, entity_clusters, graph_view
from tests.graph.test_pages import page_graph

pytestmark = pytest.mark.django_db


def entities(owner, names: list[str], salience: list[float] | None = None) -> dict[str, Entity]:
    now = timezone.now()
    made = Entity.objects.bulk_create(
        Entity(
            owner=owner,
            name=name,
            key=name.lower(),
            type="concept",
            salience=(salience[i] if salience else 0.5),
            mention_count=1,
            memory_count=1,
            first_seen=now,
            last_seen=now,
        )
        for i, name in enumerate(names)
    )
    return {e.name: e for e in made}


def relate(owner, pairs: list[tuple[Entity, Entity]], weight: float = 0.5) -> None:
    now = timezone.now()
    Relationship.objects.bulk_create(
        Relationship(
            owner=owner,
            source=a,
            target=b,
            relation_type="related_to",
            weight=weight,
            confidence=0.5,
            evidence_count=1,
            last_seen=now,
        )
        for a, b in pairs
    )


@pytest.fixture
def two_groups(user):
    """Two triangles joined by one weak edge, and two entities with no relationship at all."""
    names = ["Ada", "Babbage", "Engine", "Lisbon", "Porto", "Douro", "Lonely", "Alone"]
    made = entities(user, names, [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.95, 0.3])
    e = made
    relate(user, [(e["Ada"], e["Babbage"]), (e["Babbage"], e["Engine"]), (e["Engine"], e["Ada"])], 0.8)
    relate(user, [(e["Lisbon"], e["Porto"]), (e["Porto"], e["Douro"]), (e["Douro"], e["Lisbon"])], 0.8)
    relate(user, [(e["Engine"], e["Lisbon"])], 0.05)
    return made


def test_linked_entities_are_drawn_in_clusters_and_isolated_ones_held_back(user, two_groups):
    data = graph_view(user=user, query=GraphQuery(limit=150))
    drawn = {n["label"]: n for n in data["nodes"] if not n["isolated"]}
    isolated = [n["label"] for n in data["nodes"] if n["isolated"]]
    # "Lonely" is the most salient entity of all, but it has no relationship: it waits behind the count.
    assert set(drawn) == {"Ada", "Babbage", "Engine", "Lisbon", "Porto", "Douro"}
    assert isolated == ["Lonely", "Alone"] and data["isolatedTotal"] == 2
    assert drawn["Ada"]["cluster"] == drawn["Babbage"]["cluster"] == drawn["Engine"]["cluster"]
    assert drawn["Lisbon"]["cluster"] == drawn["Porto"]["cluster"] != drawn["Ada"]["cluster"]
    # A cluster is named after its most salient members.
    assert [c["label"] for c in data["clusters"]] == ["Ada, Babbage, Engine", "Lisbon, Porto, Douro"]
    assert all(c["size"] == 3 for c in data["clusters"])


def test_clustering_is_the_same_on_every_call():
    edges = [(i, j, 0.5) for i in range(30) for j in (i + 1, i + 2) if j < 30 and i // 10 == j // 10]
    first = entity_clusters(list(range(30)), edges)
    assert first == entity_clusters(list(range(30)), edges)
    assert sorted(map(sorted, first)) == [list(range(10)), list(range(10, 20)), list(range(20, 30))]
    assert entity_clusters([1, 2], []) == []


def test_salient_entities_linked_only_to_lesser_ones_bring_their_partner(user):
    """Ten salient entities, each linked only to one of ten barely salient ones: with a limit of 12,
    salience alone would draw ten lone nodes; each seed's strongest partner comes along instead."""
    made = entities(user, [f"Hub {i}" for i in range(10)] + [f"Leaf {i}" for i in range(10)], [0.9] * 10 + [0.1] * 10)
    relate(user, [(made[f"Hub {i}"], made[f"Leaf {i}"]) for i in range(10)])
    data = graph_view(user=user, query=GraphQuery(limit=12))
    drawn = [n for n in data["nodes"] if not n["isolated"]]
    assert len(drawn) >= 8 and len(data["nodes"]) <= 12 + 12
    assert all(n["cluster"] for n in drawn)
    assert {e["source"] for e in data["edges"]} | {e["target"] for e in data["edges"]} == {n["id"] for n in drawn}


def test_filters_apply_to_the_partners_too(user):
    made = entities(user, ["Hub", "Leaf"], [0.9, 0.1])
    Entity.objects.filter(pk=made["Leaf"].pk).update(type="person")
    relate(user, [(made["Hub"], made["Leaf"])])
    data = graph_view(user=user, query=GraphQuery(types=("concept",)))
    assert {n["label"] for n in data["nodes"]} == {"Hub"} and data["nodes"][0]["isolated"]


def test_the_page_lists_clusters_with_their_members_and_the_isolated_apart(logged_in_client, two_groups):
    response = logged_in_client.get("/graph/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Showing 6 linked entities in 2 clusters, of 8" in html and "2 with no link to them are hidden" in html
    assert html.count('class="graph-cluster"') == 2 and "Ada, Babbage, Engine" in html
    isolated = html[html.index('id="graph-isolated-list"') :].split("</section>")[0]
    assert "Lonely" in isolated and "Ada" not in isolated
    assert 'aria-labelledby="graph-cluster-isolated" hidden>' in html  # until the toggle is ticked
    assert 'id="graph-show-isolated" aria-controls="graph-isolated-list">' in html
    assert "Show the 2 unlinked entities" in html
    assert len(page_graph(response)["clusters"]) == 2


def test_with_nothing_linked_the_unlinked_entities_are_shown_at_once(logged_in_client, user):
    entities(user, ["Lonely", "Alone"])
    html = logged_in_client.get("/graph/").content.decode()
    assert "Nothing is linked yet, so the 2 unlinked entities are shown on their own" in html
    assert 'aria-controls="graph-isolated-list" checked>' in html
    assert 'aria-labelledby="graph-cluster-isolated">' in html


def test_the_memory_view_marks_memories_in_no_group_and_linked_to_nothing(api, user):
    from tests.factories import make_memory

    make_memory(user, "A note on nothing in particular.")
    body = api.get("/api/v1/graph", {"view": "memories"}).json()
    assert body["isolatedTotal"] == 1 and [n["isolated"] for n in body["nodes"]] == [True]


@pytest.mark.slow
def test_20000_entities_send_a_bounded_first_paint_in_a_bounded_number_of_queries(user, django_assert_max_num_queries):
    names = [f"Entity {i:05d}" for i in range(20_000)]
    made = list(entities(user, names, [((i * 7919) % 10007) / 10007 for i in range(20_000)]).values())
    relate(user, [(made[i], made[i + 1]) for i in range(20_000 - 1) if i % 25 != 24 and i % 5])
    with django_assert_max_num_queries(12):
        data = graph_view(user=user, query=GraphQuery(limit=150))
    drawn = [n for n in data["nodes"] if not n["isolated"]]
    assert len(drawn) <= 150 and len(data["nodes"]) <= 300 and data["total"] == 20_000
    assert len(drawn) >= 100  # most of the budget is drawn, not lone nodes
    assert data["isolatedTotal"] >= 800  # every 25th entity has no relationship
