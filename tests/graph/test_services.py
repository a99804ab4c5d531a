"""Graph services: extraction into entities, mentions and relationships; idempotency; deletion."""

from __future__ import annotations

import pytest

from graph.models import Entity, EntityMention, Relationship, RelationshipEvidence
from graph.services import graph_extract_memories
from memories.services import memory_delete, memory_update
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

SPEC_EXAMPLE = "Alice works with the Product Team, which is based in San Francisco."


def graph_rows(owner):
    entities = sorted(Entity.objects.for_user(owner).values_list("key", "type", "mention_count", "memory_count"))
    mentions = sorted(EntityMention.objects.for_user(owner).values_list("entity__key", "chunk_id", "start", "end"))
    edges = sorted(Relationship.objects.for_user(owner).values_list("source__key", "target__key", "relation_type",
                                                                     "evidence_count"))
    evidence = RelationshipEvidence.objects.for_user(owner).count()
    return entities, mentions, edges, evidence


def test_spec_example_builds_the_spec_graph(user):
    memory = make_memory(user, SPEC_EXAMPLE)
    graph_extract_memories(memory_ids=[memory.pk])
    types = dict(Entity.objects.for_user(user).values_list("name", "type"))
    assert types["Alice"] == "person"
    assert types["Product Team"] == "organization"
    assert types["San Francisco"] == "location"
    edges = set(Relationship.objects.for_user(user).values_list("source__name", "relation_type", "target__name"))
    assert ("Alice", "works_with", "Product Team") in edges
    assert ("Product Team", "located_in", "San Francisco") in edges
    edge = Relationship.objects.get(owner=user, relation_type="works_with")
    assert edge.context_chunk.memory_id == memory.pk
    assert "Alice works with" in edge.evidence
    assert 0 < edge.weight <= 1 and 0 < edge.confidence <= 1


def test_processing_twice_yields_the_same_rows(user):
    memory = make_memory(user, SPEC_EXAMPLE + " Bob uses Django and PostgreSQL at Acme Corp.")
    graph_extract_memories(memory_ids=[memory.pk])
    first = graph_rows(user)
    graph_extract_memories(memory_ids=[memory.pk, memory.pk])
    assert graph_rows(user) == first
    assert first[0] and first[2]


def test_deleting_a_memory_removes_its_mentions_and_the_edges_only_it_evidenced(user):
    kept = make_memory(user, "Alice works with the Product Team.")
    gone = make_memory(user, SPEC_EXAMPLE)
    graph_extract_memories(memory_ids=[kept.pk, gone.pk])
    assert Relationship.objects.filter(owner=user, relation_type="located_in").exists()
    memory_delete(memory=gone)
    assert not EntityMention.objects.filter(memory_id=gone.pk).exists()
    assert not Relationship.objects.filter(owner=user, relation_type="located_in").exists()
    assert not Entity.objects.filter(owner=user, key="san francisco").exists()
    alice_edge = Relationship.objects.get(owner=user, relation_type="works_with")
    assert alice_edge.evidence_count == 1
    assert Entity.objects.get(owner=user, key="alice").mention_count == 1
