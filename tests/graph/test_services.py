"""Graph services: extraction into entities, mentions and relationships; idempotency; deletion."""

from __future__ import annotations

import pytest

from graph.models import Entity, EntityMention, Relationship, RelationshipEvidence
from graph.selectors import entity_memories
from graph.services import graph_extract_memories
from memories.services import memory_delete, memory_update
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

SPEC_EXAMPLE = "Alice works with the Product Team, which is based in San Francisco."


def graph_rows(owner):
    entities = sorted(Entity.objects.for_user(owner).values_list("key", "type", "mention_count", "memory_count"))
    mentions = sorted(EntityMention.objects.for_user(owner).values_list("entity__key", "chunk_id", "start", "end"))
    edges = sorted(
        Relationship.objects.for_user(owner).values_list(
            "source__key", "target__key", "relation_type", "evidence_count"
        )
    )
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


def test_company_name_variants_become_one_entity(user):
    memory = make_memory(user, "Acme Corp signed the deal. Later Acme Corp. paid. ACME CORP is happy.")
    graph_extract_memories(memory_ids=[memory.pk])
    acme = Entity.objects.filter(owner=user, key="acme")
    assert acme.count() == 1
    assert acme.get().mention_count == 3 and acme.get().type == "organization"


def test_a_lone_first_name_merges_into_the_one_full_name_it_stands_for(user):
    full = make_memory(user, "Alice Smith works with the Product Team.")
    short = make_memory(user, "Alice works with the Design Team in Berlin.")
    graph_extract_memories(memory_ids=[full.pk])
    graph_extract_memories(memory_ids=[short.pk])
    alice = Entity.objects.get(owner=user, key="alice smith")
    assert "alice" in alice.aliases
    assert not Entity.objects.filter(owner=user, key="alice").exists()
    assert alice.memory_count == 2
    assert Relationship.objects.filter(source=alice, relation_type="works_with").count() == 2
    # Later mentions of the alias resolve straight to the full name.
    later = make_memory(user, "Alice joined the Search Team.")
    graph_extract_memories(memory_ids=[later.pk])
    assert Entity.objects.get(pk=alice.pk).memory_count == 3


def test_ambiguous_first_names_stay_separate(user):
    memory = make_memory(user, "Alice Smith and Alice Jones met Alice in London.")
    graph_extract_memories(memory_ids=[memory.pk])
    assert Entity.objects.filter(owner=user, type="person", key__startswith="alice").count() == 3


def test_the_same_name_in_two_users_graphs_is_two_entities(user, other_user):
    mine = make_memory(user, SPEC_EXAMPLE)
    theirs = make_memory(other_user, SPEC_EXAMPLE)
    graph_extract_memories(memory_ids=[mine.pk, theirs.pk])
    assert Entity.objects.filter(key="alice").count() == 2
    assert {e.owner_id for e in Entity.objects.filter(key="alice")} == {user.pk, other_user.pk}
    assert not EntityMention.objects.filter(owner=user, memory=theirs).exists()
    assert not Relationship.objects.filter(owner=user, source__owner=other_user).exists()


def test_salience_is_highest_for_the_most_prominent_entity(user):
    memories = [
        make_memory(user, text)
        for text in (
            "Alice works with the Product Team in San Francisco.",
            "Alice presented the roadmap to the board.",
            "Alice and Bob reviewed the budget.",
        )
    ]
    graph_extract_memories(memory_ids=[m.pk for m in memories])
    top = Entity.objects.for_user(user).order_by("-salience").first()
    assert top.key == "alice" and top.salience == pytest.approx(1.0)
    assert all(0 <= e.salience <= 1 for e in Entity.objects.for_user(user))
    assert Entity.objects.get(owner=user, key="bob").salience < top.salience


def test_creating_a_memory_queues_extraction_after_commit(user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        memory = make_memory(user, SPEC_EXAMPLE)
    assert EntityMention.objects.filter(memory=memory).count() == 3


def test_changing_content_re_extracts_and_drops_what_is_no_longer_said(user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        memory = make_memory(user, SPEC_EXAMPLE)
    with django_capture_on_commit_callbacks(execute=True):
        memory_update(memory=memory, content="Bob works with the Design Team in Berlin.")
    keys = set(Entity.objects.for_user(user).values_list("key", flat=True))
    assert {"bob", "design team", "berlin"} <= keys
    assert not keys & {"alice", "product team", "san francisco"}
    assert not Relationship.objects.filter(owner=user, source__key="alice").exists()
    assert not EntityMention.objects.filter(memory=memory, chunk__isnull=True).exists()


def test_rebuild_graph_command_rebuilds_one_users_graph(user, other_user):
    from io import StringIO

    from django.core.management import call_command

    make_memory(user, SPEC_EXAMPLE)
    make_memory(other_user, SPEC_EXAMPLE)
    out = StringIO()
    call_command("rebuild_graph", "--user", user.username, stdout=out)
    assert Entity.objects.filter(owner=user).count() >= 3
    assert not Entity.objects.filter(owner=other_user).exists()
    call_command("rebuild_graph", "--user", user.username, stdout=out)
    assert Entity.objects.get(owner=user, key="alice").mention_count == 1


def test_rebuild_graph_refuses_an_unknown_user(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="no user"):
        call_command("rebuild_graph", "--user", "nobody-here")


def test_a_title_names_what_the_text_does_not_and_is_read_once(user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        titled = make_memory(
            user,
            "The under-12s play on Sunday mornings; Leo needs new shin pads before the first away game.",
            title="Riverside Rovers: spring fixtures",
        )
        opening = make_memory(user, "Helen Clarke runs the choir rehearsals on Thursdays at the church hall.")
    rovers = Entity.objects.get(owner=user, key="riverside rovers")
    (mention,) = EntityMention.objects.filter(entity=rovers, memory=titled)
    assert (mention.start, mention.end) == (0, 1), "a name in the title is kept on the chunk's first character"
    (shown,) = entity_memories(entity=rovers)
    assert shown["snippet"]["match"] == "Riverside Rovers", "the entity's page quotes the title, not a letter"
    leo = EntityMention.objects.get(memory=titled, entity__key="leo")
    assert titled.chunks.get(pk=leo.chunk_id).text[leo.start : leo.end] == "Leo", "the text's mentions keep their place"
    helen = EntityMention.objects.filter(memory=opening, entity__key="helen clarke")
    assert helen.count() == 1, "a title taken from the text's opening is not read twice"
