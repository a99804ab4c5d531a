"""Memory links: shared entities, shared topical tags, close meaning; refresh, reinforce, expire; the
evidence each keeps; the bad inputs of issue 29."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from graph.linkrules import LINK_RULES_VERSION
from graph.models import EntityMention, MemoryLink
from graph.services import graph_extract_memories, memory_links_expire, memory_links_refresh
from graph.services.links import PER_MEMORY
from memories.services import memory_update
from tests.factories import EntityFactory, EntityMentionFactory, make_memory

pytestmark = pytest.mark.django_db


def reasons(a, b) -> set[str]:
    low, high = sorted((a.pk, b.pk))
    return set(MemoryLink.objects.filter(source_id=low, target_id=high).values_list("reason", flat=True))


def test_memories_sharing_entities_are_linked_and_unrelated_ones_are_not(user):
    a = make_memory(user, "Alice works with the Product Team in San Francisco.")
    b = make_memory(user, "The Product Team hired Alice to lead the San Francisco launch.")
    c = make_memory(user, "Photosynthesis converts light into chemical energy in chloroplasts.")
    graph_extract_memories(memory_ids=[a.pk, b.pk, c.pk])
    result = memory_links_refresh(owner=user)
    assert "shared_entities" in reasons(a, b)
    assert not reasons(a, c) and not reasons(b, c)
    assert result["created"] >= 1
    link = MemoryLink.objects.get(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk), reason="shared_entities")
    assert 0 < link.score <= 1 and 0 < link.confidence <= 1


def test_shared_manual_tags_link_but_source_tags_alone_do_not(user):
    a = make_memory(user, "Budget figures for the spring.", manual_tags=["project-x"])
    b = make_memory(user, "Hiring plan for the autumn.", manual_tags=["project-x"])
    c = make_memory(user, "Recipe for a lemon cake.")
    memory_links_refresh(owner=user)
    assert "shared_tags" in reasons(a, b)
    assert "shared_tags" not in reasons(a, c)  # both carry the structural "upload" tag only


@pytest.mark.real_embedder  # a paraphrase: only the real model knows the two mean the same
def test_close_meaning_links_memories(user):
    a = make_memory(user, "The quarterly budget review showed costs rising in every department.")
    b = make_memory(user, "In the quarterly budget review, costs rose across all departments.")
    memory_links_refresh(owner=user)
    assert "semantic" in reasons(a, b)


def test_refreshing_twice_changes_nothing_and_reinforces_only_named_memories(user):
    a = make_memory(user, "Budget figures for the spring.", manual_tags=["project-x"])
    b = make_memory(user, "Hiring plan for the autumn.", manual_tags=["project-x"])
    memory_links_refresh(owner=user)
    # There is something to refresh: otherwise every count below would hold with no links at all.
    assert "shared_tags" in reasons(a, b)
    rows = list(MemoryLink.objects.values_list("source_id", "target_id", "reason", "score"))
    assert rows
    past = timezone.now() - timedelta(days=30)
    MemoryLink.objects.update(last_reinforced_at=past)
    again = memory_links_refresh(owner=user)
    assert again["created"] == 0 and again["expired"] == 0 and again["reinforced"] == 0
    assert list(MemoryLink.objects.values_list("source_id", "target_id", "reason", "score")) == rows
    assert MemoryLink.objects.filter(last_reinforced_at=past).count() == len(rows)
    named = memory_links_refresh(owner=user, memory_ids=[a.pk])
    assert named["reinforced"] == len(rows)
    assert not MemoryLink.objects.filter(last_reinforced_at=past).exists()


def test_a_link_expires_when_its_evidence_is_gone(user):
    a = make_memory(user, "Budget figures for the spring.", manual_tags=["project-x"])
    b = make_memory(user, "Hiring plan for the autumn.", manual_tags=["project-x"])
    memory_links_refresh(owner=user)
    assert "shared_tags" in reasons(a, b)
    memory_update(memory=b, manual_tags=["gardening"])
    assert memory_links_expire(owner=user) >= 1
    assert "shared_tags" not in reasons(a, b)


def test_links_never_cross_owners(user, other_user):
    a = make_memory(user, "Alice works with the Product Team in San Francisco.", manual_tags=["team"])
    b = make_memory(other_user, "Alice works with the Product Team in San Francisco.", manual_tags=["team"])
    graph_extract_memories(memory_ids=[a.pk, b.pk])
    memory_links_refresh(owner=user)
    memory_links_refresh(owner=other_user)
    assert not reasons(a, b)
    assert memory_links_refresh(owner=user, memory_ids=[b.pk]) == {
        "created": 0,
        "reinforced": 0,
        "unchanged": 0,
        "expired": 0,
    }


# --- Rarity, evidence and the bad inputs of issue 29 -------------------------------------------------


def mention(memory, entity):
    return EntityMentionFactory(memory=memory, entity=entity)


def content_links(user):
    return MemoryLink.objects.filter(owner=user, reason__in=["semantic", "shared_entities", "shared_tags"])


def test_a_link_keeps_its_evidence_with_weights_and_the_similarity(user):
    a = make_memory(user, "Priya moved the Hetzner boxes to Falkenstein on Friday.")
    b = make_memory(user, "Invoice from Hetzner: Priya asked about the Falkenstein rack.")
    fillers = [make_memory(user, f"Unrelated note number {i} about {word}.") for i, word in enumerate(FILLER_WORDS)]
    everyone = [a, b, *fillers]
    for name in ("Priya", "Hetzner", "Falkenstein"):
        entity = EntityFactory(owner=user, name=name)
        mention(a, entity)
        mention(b, entity)
    memory_links_refresh(owner=user)
    link = content_links(user).get(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk))
    assert link.reason == "shared_entities" and link.score < 1 and link.rules_version == LINK_RULES_VERSION
    assert {name for name, _ in link.details["entities"]} == {"Priya", "Hetzner", "Falkenstein"}
    assert all(weight == 1.0 for _, weight in link.details["entities"])  # only these two carry them
    assert -1 <= link.details["similarity"] <= 1
    assert link.explanation.startswith("shares 3 rare names: ")
    assert len(everyone) == len(FILLER_WORDS) + 2


FILLER_WORDS = ("bread", "tomatoes", "marathon", "dentist", "cello", "kayak", "ferns", "taxes")


def test_an_entity_in_every_memory_links_none_of_them(user):
    memories = [make_memory(user, f"A note on {word} and nothing else.") for word in FILLER_WORDS]
    everywhere = EntityFactory(owner=user, name="Kybernesis")
    half = EntityFactory(owner=user, name="Berlin")
    for i, memory in enumerate(memories):
        mention(memory, everywhere)
        if i % 2:
            mention(memory, half)
    memory_links_refresh(owner=user)
    for link in content_links(user):
        weights = dict(map(tuple, link.details["entities"]))
        assert "Kybernesis" not in weights and "Berlin" not in weights, link.explanation


def test_memories_with_no_entities_are_linked_by_meaning_and_tags(user):
    a = make_memory(user, "Tempo run on Tuesday: six kilometres at threshold pace, then a cool down jog.")
    b = make_memory(user, "Tempo run on Thursday: six kilometres at threshold pace, then a cool down.")
    for word in FILLER_WORDS:
        make_memory(user, f"Shopping list with {word}, milk and eggs for the weekend.")
    memory_links_refresh(owner=user)
    link = content_links(user).get(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk))
    assert link.details["entities"] == [] and link.details["similarity"] > 0.5 and link.score < 1


def test_near_duplicates_score_one_and_nothing_else_does(user):
    text = "Quarterly budget review: costs rose in every department, travel most of all."
    a, b = make_memory(user, text), make_memory(user, text)
    c = make_memory(user, "Quarterly budget review: costs fell in most departments, travel least of all.")
    for word in FILLER_WORDS:
        make_memory(user, f"A note about {word} for the garden club newsletter.")
    memory_links_refresh(owner=user)
    twins = content_links(user).get(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk))
    assert twins.score == 1.0 and twins.details["nearDuplicate"] is True
    assert "nearly the same text" in twins.explanation
    assert not content_links(user).filter(score__gte=1.0).exclude(pk=twins.pk).exists()
    assert content_links(user).filter(Q(source=c) | Q(target=c)).exists()


def test_meaning_links_only_memories_in_a_language_the_model_reads(user, settings):
    """Two German notes that say much the same thing: the link by meaning holds for a model that reads
    German, and not for the bundled English one, to which German texts are alike for being German."""
    a = make_memory(user, "Der Mieter kann die Wohnung mit einer Frist von drei Monaten schriftlich kündigen.")
    b = make_memory(
        user, "Die Wohnung kann der Mieter schriftlich mit einer Frist von drei Monaten kündigen, sagt das Gesetz."
    )
    assert (a.language, b.language) == ("de", "de")
    for word in FILLER_WORDS:
        make_memory(user, f"A note about {word} for the garden club newsletter.")
    pair = content_links(user).filter(source_id=min(a.pk, b.pk), target_id=max(a.pk, b.pk))
    settings.KYBERNESIS_EMBEDDING_LANGUAGES = frozenset({"*"})
    memory_links_refresh(owner=user)
    assert "semantic" in set(pair.values_list("reason", flat=True))
    settings.KYBERNESIS_EMBEDDING_LANGUAGES = frozenset({"en"})
    memory_links_refresh(owner=user)
    # Only what they share rarely (their auto tags, here) may still link them.
    assert "semantic" not in set(pair.values_list("reason", flat=True))


def test_shared_names_among_many_are_an_accident_of_length(user):
    """Two long documents on different subjects that both name a few of the same things (the issue's
    JIT compiler paper and security note) are not linked, let alone at 1.0."""
    paper = make_memory(user, "Trace-based just-in-time compilation for dynamic languages. " * 5)
    note = make_memory(user, "Security and privacy checklist for the household accounts. " * 5)
    for word in FILLER_WORDS:
        make_memory(user, f"Unrelated short note on {word}.")
    for name in ("Google Docs", "web browser", "USA"):
        entity = EntityFactory(owner=user, name=name)
        mention(paper, entity)
        mention(note, entity)
    for i in range(60):  # each long document names many things of its own
        mention(paper, EntityFactory(owner=user, name=f"Compiler term {i}"))
        mention(note, EntityFactory(owner=user, name=f"Security term {i}"))
    memory_links_refresh(owner=user)
    assert not content_links(user).filter(source_id=min(paper.pk, note.pk), target_id=max(paper.pk, note.pk)).exists()


def test_a_note_naming_two_thousand_people_links_to_few_and_never_by_one_name(user):
    roll = make_memory(user, "The alumni roll call: " + ", ".join(f"Person {i}" for i in range(2_000)))
    people = [EntityFactory(owner=user, name=f"Person {i}", type="person") for i in range(2_000)]
    EntityMention.objects.bulk_create(
        EntityMention(memory=roll, owner=user, entity=p, chunk=roll.chunks.first(), start=0, end=1, type="person")
        for p in people
    )
    notes = []
    for i, word in enumerate(FILLER_WORDS):
        note = make_memory(user, f"Met Person {i} at the {word} workshop.")
        mention(note, people[i])
        notes.append(note)
    result = memory_links_refresh(owner=user)
    assert result["created"] >= 0
    for link in content_links(user).filter(Q(source=roll) | Q(target=roll)):
        assert link.reason == "semantic", link.explanation  # one shared name among 2,000 links nothing
    assert content_links(user).filter(Q(source=roll) | Q(target=roll)).count() <= PER_MEMORY


def test_the_api_returns_each_link_with_its_evidence(user, api, other_api):
    a = make_memory(user, "Priya moved the Hetzner boxes to Falkenstein on Friday.")
    b = make_memory(user, "Invoice from Hetzner: Priya asked about the Falkenstein rack.")
    for word in FILLER_WORDS:
        make_memory(user, f"A note on {word}.")
    for name in ("Priya", "Hetzner"):
        entity = EntityFactory(owner=user, name=name)
        mention(a, entity)
        mention(b, entity)
    memory_links_refresh(owner=user)
    response = api.get(f"/api/v1/memories/{a.pk}/links")
    assert response.status_code == 200, response.content
    (item,) = response.json()
    assert item["memory"] == {"id": b.pk, "title": b.title}
    (link,) = item["links"]
    assert link["reason"] == "shared_entities" and link["explanation"].startswith("shares 2 rare names")
    assert {e["name"]: e["weight"] for e in link["evidence"]["entities"]} == {"Priya": 1.0, "Hetzner": 1.0}
    assert link["evidence"]["similarity"] is not None and link["evidence"]["nearDuplicate"] is False
    assert link["rulesVersion"] == LINK_RULES_VERSION
    assert other_api.get(f"/api/v1/memories/{a.pk}/links").status_code == 404
    assert api.get("/api/v1/memories/0/links").status_code in (404, 422)
