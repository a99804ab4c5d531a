"""Version history: what a version keeps, who made it, restore, bad version numbers, retention."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.http import Http404
from django.test import override_settings

from core.actors import SLEEP_AGENT, Actor, acting
from memories import history, services
from memories.models import VERSIONED_FIELDS, Activity, Memory, MemoryChunk, MemoryVersion
from memories.services.history import version_get
from memories.services.memory import chunks_for
from memories.services.restore import memory_version_restore
from tests.factories import UserFactory, make_memory

pytestmark = pytest.mark.django_db

OLD = "The lighthouse keeper logged the storm at midnight and rang the harbour bell twice."
NEW = "Quarterly revenue grew in the northern region after the new distribution contract."


def versions(memory):
    return list(MemoryVersion.objects.filter(pgh_obj_id=memory.pk).order_by("version"))


def state(memory) -> dict:
    memory.refresh_from_db()
    return {name: getattr(memory, name) for name in VERSIONED_FIELDS}


def test_a_new_memory_is_version_1_with_what_it_holds(user):
    memory = make_memory(user, content=OLD, title="Storm log", manual_tags=["sea"])
    memory.refresh_from_db()
    (first,) = versions(memory)
    assert memory.version == first.version == 1
    assert first.pgh_label == "created"
    assert (first.title, first.content, first.manual_tags) == ("Storm log", OLD, ["sea"])
    assert first.auto_tags == memory.auto_tags


def test_each_change_of_a_versioned_field_is_one_new_version_and_other_writes_are_none(user):
    memory = make_memory(user, content=OLD, title="Storm log")
    services.memory_update(memory=memory, content=NEW)
    services.memory_tags_add(memory=memory, tags=["work"])
    services.memory_pin(memory=memory, pinned=True)
    services.memory_update(memory=memory, priority=0.9)
    services.memory_open(memory=memory)  # an access: no version
    services.memory_update(memory=memory, priority=0.9)  # nothing changes: no version
    services.memory_retier(memory=memory)
    numbers = [v.version for v in versions(memory)]
    assert numbers == [1, 2, 3, 4, 5]
    memory.refresh_from_db()
    assert memory.version == 5
    last = versions(memory)[-1]
    assert (last.content, last.manual_tags, last.pinned, last.priority) == (NEW, ["work"], True, 0.9)


def test_a_bulk_update_outside_the_services_is_versioned_too(user):
    memory = make_memory(user, content=OLD)
    Memory.objects.filter(pk=memory.pk).update(summary="A storm at midnight.")
    assert [v.summary for v in versions(memory)] == ["", "A storm at midnight."]
    assert history.actor_of(versions(memory)[-1].pgh_context)["label"] == "system"


def test_versions_name_who_made_them(user):
    memory = make_memory(user, content=OLD)
    with acting(Actor.person(user)):
        services.memory_update(memory=memory, title="By hand")
    with acting(SLEEP_AGENT):
        services.memory_summaries_save(summaries={memory.pk: ("Storm.", "Storm.", memory.content_hash)})
    with acting(Actor.connector("Google Drive")):
        services.memory_update(memory=memory, content=NEW, from_source=True)
    labels = [(v.pgh_context or {}).get("label") for v in versions(memory)]
    assert labels == ["system", user.username, "sleep agent", "Google Drive"]
    kinds = [(v.pgh_context or {}).get("kind") for v in versions(memory)]
    assert kinds == ["system", "person", "sleep", "connector"]


def test_edit_then_restore_is_field_for_field_the_old_self_and_a_new_version(user):
    memory = make_memory(user, content=OLD, title="Storm log", manual_tags=["sea"], metadata={"k": 1})
    services.memory_summaries_save(
        summaries={memory.pk: ("A storm.", "A storm.", Memory.objects.get(pk=memory.pk).content_hash)}
    )
    before = state(memory)
    services.memory_update(
        memory=memory, title="Revenue", content=NEW, manual_tags=["money"], metadata={"k": 2}, priority=0.2
    )
    services.memory_pin(memory=memory, pinned=True)
    restored = memory_version_restore(memory=memory, number=2)
    assert state(restored) == before
    assert restored.version == 5
    assert versions(memory)[-1].pgh_context["restoredFrom"] == 2
    texts = [c.text for c in MemoryChunk.objects.filter(memory=memory).order_by("position")]
    assert texts == [c.text for c in chunks_for(OLD)]
    entry = Activity.objects.filter(memory=memory).first()
    assert entry.kind == "restored" and entry.detail["restoredFrom"] == 2


def test_restoring_the_current_state_changes_nothing(user):
    memory = make_memory(user, content=OLD)
    restored = memory_version_restore(memory=memory, number=1)
    assert restored.version == 1 and len(versions(memory)) == 1


def test_restore_into_a_memory_edited_meanwhile_keeps_that_edit_as_a_version(user):
    memory = make_memory(user, content=OLD)
    services.memory_update(memory=memory, content=NEW)
    stale = Memory.objects.get(pk=memory.pk)
    services.memory_update(memory=memory, content=NEW + " Third.")
    restored = memory_version_restore(memory=stale, number=1)
    assert restored.content == OLD
    assert [v.content for v in versions(memory)] == [OLD, NEW, NEW + " Third.", OLD]


@pytest.mark.parametrize("number", [0, -1, "-3", 10**12, "x", "1.5", 7])
def test_a_version_that_does_not_exist_is_a_404_with_a_reason(user, number):
    memory = make_memory(user, content=OLD)
    with pytest.raises(Http404) as caught:
        memory_version_restore(memory=memory, number=number)
    assert "version" in str(caught.value)


@override_settings(KYBERNESIS_HISTORY_KEEP=5)
def test_retention_keeps_the_newest_versions_and_says_why_an_old_one_is_gone(user):
    memory = make_memory(user, content=OLD)
    for i in range(12):
        services.memory_update(memory=memory, priority=round(0.05 * (i + 1), 2))
    assert [v.version for v in versions(memory)] == [9, 10, 11, 12, 13]
    with pytest.raises(Http404, match="no longer kept"):
        version_get(memory=memory, number=3)


@override_settings(KYBERNESIS_HISTORY_KEEP=20)
def test_ten_thousand_edits_of_one_memory_keep_the_bound(user):
    memory = make_memory(user, content=OLD)
    for start in range(0, 10_000, 500):
        # 500 edits a statement each, looped in the server: the same row triggers fire as for 500
        # round trips from here, a tenth of the time.
        with connection.cursor() as cursor:
            cursor.execute(
                f"DO $$ BEGIN FOR i IN {start}..{start + 499} LOOP "
                f"UPDATE memories_memory SET priority = (i % 100) / 100.0 + 0.001 WHERE id = {int(memory.pk)}; "
                "END LOOP; END $$"
            )
        services.memory_update(memory=memory, title=f"Edit {start + 499}")
    services.memory_update(memory=memory, title="Last")
    assert MemoryVersion.objects.filter(pgh_obj_id=memory.pk).count() == 20
    memory.refresh_from_db()
    assert memory.version == 10_000 + 20 + 1 + 1


def test_the_trash_keeps_a_memorys_versions_and_purging_removes_them(user):
    memory = make_memory(user, content=OLD)
    services.memory_update(memory=memory, content=NEW)
    memory.refresh_from_db()  # its title, taken from the first line, follows the new content
    services.memory_delete(memory=memory)
    assert MemoryVersion.objects.filter(pgh_obj_id=memory.pk).count() == 2
    services.memory_purge(owner=user, memory_id=memory.pk)
    assert not MemoryVersion.objects.filter(pgh_obj_id=memory.pk).exists()
    kinds = list(Activity.objects.filter(owner=user, memory_title=memory.title).values_list("kind", flat=True))
    assert kinds[:2] == ["purged", "trashed"]


def test_fifty_random_edit_and_restore_sequences_lose_nothing(user):
    rng = random.Random(31)
    words = "harbour storm ledger revenue bell keeper contract region winter lamp".split()
    differences = 0
    for seq in range(50):
        memory = make_memory(user, content=f"Seed {seq}: " + " ".join(rng.sample(words, 5)))
        seen = {1: state(memory)}
        for _ in range(rng.randint(2, 5)):
            step = rng.random()
            if step < 0.6:
                services.memory_update(
                    memory=memory,
                    content=f"Seq {seq} " + " ".join(rng.choices(words, k=rng.randint(3, 30))),
                    title=rng.choice(words).title(),
                    manual_tags=rng.sample(words, rng.randint(0, 3)),
                    priority=round(rng.random(), 2),
                )
            elif step < 0.75:
                services.memory_pin(memory=memory, pinned=rng.random() < 0.5)
            else:
                number = rng.choice(sorted(seen))
                memory_version_restore(memory=memory, number=number)
                differences += state(memory) != seen[number]
            memory.refresh_from_db()
            seen[memory.version] = state(memory)
        for v in versions(memory):
            differences += {name: getattr(v, name) for name in VERSIONED_FIELDS} != seen[v.version]
    assert differences == 0


def test_another_users_memory_versions_are_404(user):
    other = UserFactory()
    memory = make_memory(other, content=OLD)
    with pytest.raises(Http404):
        history.memory_version_list(user=user, memory_id=memory.pk)
