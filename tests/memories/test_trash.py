"""The trash: a delete from any door moves a memory there, out of every read; a restore brings back all it
had, field for field; a purge (one, all, or the expired) deletes it for good, its original file too."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.http import Http404
from django.test import Client
from django.utils import timezone

from graph import selectors as graph_selectors
from graph.models import Entity, EntityMention, MemoryLink
from graph.services import graph_ingest_memories, memory_links_refresh
from memories import original_files, search, selectors, services
from memories.models import (
    TRASH_LAYER,
    ChunkTerm,
    CorpusStat,
    Memory,
    MemoryChunk,
    Original,
    PurgedMemory,
    TermStat,
)
from memories.search import lexical
from memories.search.answers import answer_question
from memories.services import bulk
from memories.services.trash import trash_schedule_ensure
from tests.factories import MemoryLinkFactory, UserFactory, make_memory
from tests.memories.originals_helpers import upload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("store_dir")]

HERON = "The grey heron Ardea cinerea nests in Richmond Park near the Pen Ponds every spring."
BUDGET = "The quarterly budget review with Marta Lindqvist moved to Thursday at the Oslo office."
SOURDOUGH = "Feed the sourdough starter with rye flour and water twice a day before baking."


def memory_state(memory_id: int) -> dict:
    """Everything a restore must give back: the row, its chunks (ids, text, vectors, layer), tags, links,
    the original (row and bytes)."""
    memory = Memory.all_objects.get(pk=memory_id)
    row = {f.attname: getattr(memory, f.attname) for f in Memory._meta.concrete_fields}
    chunks = [
        (c.pk, c.position, c.text, c.char_start, c.char_end, c.text_hash, list(c.embedding), c.tier, c.embedding_key)
        for c in MemoryChunk.objects.filter(memory_id=memory_id).order_by("position")
    ]
    links = sorted(
        (link.pk, link.source_id, link.target_id, link.reason, link.score, link.evidence)
        for link in MemoryLink.objects.filter(source_id=memory_id) | MemoryLink.objects.filter(target_id=memory_id)
    )
    original = Original.objects.filter(memory_id=memory_id).values("name", "media_type", "size", "sha256").first()
    data = None
    if original is not None:
        data = original_files.path_for(memory.owner_id, original["sha256"]).read_bytes()
    return {"row": row, "chunks": chunks, "links": links, "original": original, "bytes": data}


def lexical_state(owner_id: int) -> tuple:
    """Postings, document frequencies and totals. Not the impacts: BM25 fixes them with the owner's
    average chunk length at the moment of indexing, as for any memory indexed later."""
    postings = sorted(ChunkTerm.objects.filter(owner_id=owner_id).values_list("chunk_id", "lexeme", "tf"))
    df = sorted(TermStat.objects.filter(owner_id=owner_id, df__gt=0).values_list("lexeme", "df"))
    corpus = CorpusStat.objects.filter(owner_id=owner_id).values_list("chunk_count", "total_length").first()
    return postings, df, corpus


def found_ids(user, query: str) -> set[int]:
    response = search.hybrid_search(user.pk, query, limit=50, min_score=0.0)
    return {r.memory_id for r in response.results}


def test_trash_then_restore_gives_back_chunks_tags_links_and_the_original_field_for_field(user):
    [result] = services.upload_files(owner=user, files=[upload("heron.txt", HERON.encode())], manual_tags=["birds"])
    heron = result.memory
    other = make_memory(user, BUDGET)
    MemoryLinkFactory(
        owner=user, source=heron if heron.pk < other.pk else other, target=other if heron.pk < other.pk else heron
    )
    before, index_before = memory_state(heron.pk), lexical_state(user.pk)
    assert before["original"] is not None and before["links"]

    services.memory_delete(memory=heron)

    trashed = Memory.all_objects.get(pk=heron.pk)
    assert trashed.trashed_at is not None and trashed.trashed_by == "system"
    assert set(MemoryChunk.objects.filter(memory=heron).values_list("tier", flat=True)) == {TRASH_LAYER}
    assert not ChunkTerm.objects.filter(chunk__memory=heron).exists()
    # Kept while trashed: chunks, tags, links, the original and its bytes.
    during = memory_state(heron.pk)
    assert [c[:7] for c in during["chunks"]] == [c[:7] for c in before["chunks"]]
    assert during["links"] == before["links"] and during["original"] == before["original"]
    assert during["bytes"] == HERON.encode()

    services.memory_restore_from_trash(owner=user, memory_id=heron.pk)

    assert memory_state(heron.pk) == before
    assert lexical_state(user.pk) == index_before
    assert heron.pk in found_ids(user, "heron nests Richmond Park")


def test_a_trashed_memory_is_in_no_search_list_count_tag_cloud_or_answer(user):
    heron, budget = make_memory(user, HERON, manual_tags=["birds"]), make_memory(user, BUDGET)
    assert heron.pk in found_ids(user, "grey heron")
    services.memory_delete(memory=heron)

    # Vector and lexical: neither side brings a trashed chunk, whatever the query or filters.
    assert heron.pk not in found_ids(user, "grey heron Ardea cinerea Pen Ponds")
    assert heron.pk not in found_ids(user, HERON)
    for tier in ("hot", "warm", "archive"):
        filters = search.search_filters(tier=tier)
        response = search.hybrid_search(user.pk, HERON, limit=50, min_score=0.0, filters=filters)
        assert heron.pk not in {r.memory_id for r in response.results}
    assert [m.pk for m in selectors.memory_list(user=user)] == [budget.pk]
    assert sum(selectors.memory_tier_counts(user=user).values()) == 1
    assert "birds" not in {t["tag"] for t in selectors.tag_counts(user=user)}
    with pytest.raises(Http404):
        selectors.memory_get(user=user, memory_id=heron.pk)
    with pytest.raises(Http404):
        selectors.memory_original_get(user=user, memory_id=heron.pk)
    assert all(
        s.memory_id != heron.pk for s in answer_question(user=user, question="Where do grey herons nest?").sentences
    )
    # The tier sweep leaves it where it is: its chunks stay in the trash layer.
    services.memories_retier(owner=user)
    assert set(MemoryChunk.objects.filter(memory=heron).values_list("tier", flat=True)) == {TRASH_LAYER}


def test_trashing_takes_its_entities_and_links_out_of_the_graph_and_restoring_brings_them_back(user):
    heron, budget = make_memory(user, HERON), make_memory(user, BUDGET)
    graph_ingest_memories(memory_ids=[heron.pk, budget.pk])
    link = MemoryLinkFactory(owner=user, source=heron, target=budget)
    names = set(Entity.objects.filter(owner=user, mentions__memory=heron).values_list("key", flat=True))
    assert names

    services.memory_delete(memory=heron)

    assert not EntityMention.objects.filter(memory_id=heron.pk).exists()
    only_heron = names - set(Entity.objects.filter(owner=user, mentions__memory=budget).values_list("key", flat=True))
    assert not Entity.objects.filter(owner=user, key__in=only_heron).exists()
    assert graph_selectors.memory_links(memory=budget) == []
    view = graph_selectors.graph_view(user=user, query=graph_selectors.GraphQuery(view="memories"))
    assert {n["memoryId"] for n in view["nodes"] if n["kind"] == "memory"} == {budget.pk}
    # A whole-graph refresh keeps the trashed memory's link for its restore.
    memory_links_refresh(owner=user, expire_all=True)
    assert MemoryLink.objects.filter(pk=link.pk).exists()

    services.memory_restore_from_trash(owner=user, memory_id=heron.pk)
    assert [item["memory"].pk for item in graph_selectors.memory_links(memory=budget)] == [heron.pk]
    graph_ingest_memories(memory_ids=[heron.pk])  # the worker's job after the restore commits
    assert set(Entity.objects.filter(owner=user, mentions__memory=heron).values_list("key", flat=True)) == names


def test_fifty_random_trash_restore_purge_sequences_leave_no_difference(user):
    rng = random.Random(31)
    texts = [HERON, BUDGET, SOURDOUGH, "Marathon training: tempo run on Tuesday, long run on Sunday."]
    differences = 0
    for sequence in range(50):
        memories = [make_memory(user, f"{text} (sequence {sequence})") for text in texts]
        expected = {m.pk: memory_state(m.pk) for m in memories}
        purged: set[int] = set()
        for _ in range(8):
            memory_id = rng.choice(list(expected))
            action = rng.choice(["trash", "trash", "restore", "restore", "purge"])
            trashed = Memory.all_objects.filter(pk=memory_id, trashed_at__isnull=False).exists()
            try:
                if action == "trash":
                    services.memories_trash(owner_id=user.pk, memory_ids=[memory_id])
                elif action == "restore":
                    services.memory_restore_from_trash(owner=user, memory_id=memory_id)
                else:
                    services.memory_purge(owner=user, memory_id=memory_id)
                    purged.add(memory_id)
            except Http404:
                assert action != "trash" and (memory_id in purged or not trashed)
        for memory_id, state in expected.items():
            if memory_id in purged:
                differences += Memory.all_objects.filter(pk=memory_id).exists()
                continue
            services.memories_restore_from_trash(owner_id=user.pk, memory_ids=[memory_id])
            differences += memory_state(memory_id) != state
        # The lexical index is exactly what indexing the live chunks from scratch gives.
        incremental = lexical_state(user.pk)
        lexical.reindex_owner(user.pk)
        differences += incremental != lexical_state(user.pk)
        Memory.all_objects.filter(owner=user).delete()
        lexical.reindex_owner(user.pk)
    assert differences == 0


def test_a_purged_memory_cannot_be_restored_and_the_404_says_why(user):
    memory = make_memory(user, HERON)
    services.memory_delete(memory=memory)
    services.memory_purge(owner=user, memory_id=memory.pk)
    assert not Memory.all_objects.filter(pk=memory.pk).exists()
    assert PurgedMemory.objects.filter(owner=user, memory_id=memory.pk).exists()
    with pytest.raises(Http404, match="deleted forever"):
        services.memory_restore_from_trash(owner=user, memory_id=memory.pk)
    live = make_memory(user, BUDGET)
    with pytest.raises(Http404, match="is not in the trash"):
        services.memory_restore_from_trash(owner=user, memory_id=live.pk)
    with pytest.raises(Http404, match="No memory 999999"):
        services.memory_purge(owner=user, memory_id=999_999)


def test_a_trashed_memory_cannot_be_edited_tagged_or_pinned(user):
    memory = make_memory(user, HERON)
    services.memory_delete(memory=memory)
    for write in (
        lambda: services.memory_update(memory=memory, title="New title"),
        lambda: services.memory_tags_add(memory=memory, tags=["x"]),
        lambda: services.memory_pin(memory=memory, pinned=True),
        lambda: services.memory_delete(memory=memory),
    ):
        with pytest.raises(Http404):
            write()


def test_adding_content_that_is_in_the_trash_restores_that_memory(user):
    memory = make_memory(user, HERON, manual_tags=["birds"])
    services.memory_delete(memory=memory)

    again = services.memory_create(owner=user, title="", content=HERON, unique=True)

    assert again.pk == memory.pk and again.created is False and again.restored is True
    assert Memory.objects.get(pk=memory.pk).manual_tags == ["birds"]
    assert Memory.all_objects.filter(owner=user).count() == 1
    assert memory.pk in found_ids(user, "grey heron")

    # The same through an upload, and a batch holding it twice.
    services.memory_delete(memory=again)
    [result] = services.upload_files(owner=user, files=[upload("heron.txt", HERON.encode())])
    assert result.status == "duplicate" and result.memory.pk == memory.pk
    services.memory_delete(memory=again)
    items = [services.MemoryInput(title=None, content=HERON)] * 2
    restored = services.memory_create_many(owner=user, items=items, unique=True)
    assert [m.pk for m in restored] == [memory.pk, memory.pk] and Memory.all_objects.filter(owner=user).count() == 1


def test_without_unique_a_create_stores_a_new_memory_beside_the_trashed_one(user):
    memory = make_memory(user, HERON)
    services.memory_delete(memory=memory)
    fresh = services.memory_create(owner=user, title="", content=HERON)
    assert fresh.pk != memory.pk and Memory.all_objects.get(pk=memory.pk).trashed_at is not None


def test_the_scheduled_purge_deletes_what_is_older_than_the_trash_days_and_its_file(
    user, settings, django_capture_on_commit_callbacks, store_dir
):
    settings.KYBERNESIS_TRASH_DAYS = 30
    [old] = [r.memory for r in services.upload_files(owner=user, files=[upload("old.txt", HERON.encode())])]
    young = make_memory(user, BUDGET)
    services.memories_trash(owner_id=user.pk, memory_ids=[old.pk, young.pk])
    Memory.all_objects.filter(pk=old.pk).update(trashed_at=timezone.now() - timedelta(days=30, minutes=1))
    Memory.all_objects.filter(pk=young.pk).update(trashed_at=timezone.now() - timedelta(days=29))
    path = original_files.path_for(user.pk, Original.objects.get(memory=old).sha256)
    assert path.exists()

    with django_capture_on_commit_callbacks(execute=True):
        assert services.trash_purge_expired() == 1

    assert not Memory.all_objects.filter(pk=old.pk).exists() and not path.exists()
    assert Memory.all_objects.get(pk=young.pk).trashed_at is not None
    assert lexical_state(user.pk)[2] == (0, 0)  # the trashed chunks were out of the totals already


def test_the_purge_schedule_is_registered_once(db):
    from django_q.models import Schedule

    trash_schedule_ensure()
    trash_schedule_ensure()
    [schedule] = Schedule.objects.filter(func="memories.tasks.trash_purge_expired")
    assert schedule.minutes == 60 and schedule.repeats == -1


def test_empty_trash_purges_only_the_owners_trash(user, other_user):
    mine = [make_memory(user, text) for text in (HERON, BUDGET)]
    theirs = make_memory(other_user, HERON)
    keep = make_memory(user, SOURDOUGH)
    services.memories_trash(owner_id=user.pk, memory_ids=[m.pk for m in mine])
    services.memories_trash(owner_id=other_user.pk, memory_ids=[theirs.pk])
    assert services.trash_empty(owner=user) == 2
    assert services.trash_empty(owner=user) == 0
    assert Memory.all_objects.filter(pk=theirs.pk).exists() and Memory.objects.filter(pk=keep.pk).exists()


def test_bulk_delete_moves_to_the_trash_and_its_undo_restores_the_same_memories(user):
    memories = [make_memory(user, text) for text in (HERON, BUDGET)]
    result = bulk.memories_bulk(owner=user, memory_ids=[m.pk for m in memories], action="delete")
    assert result.message == "Moved 2 memories to the trash."
    assert selectors.trash_count(user=user) == 2
    assert bulk.memories_bulk_undo(owner=user, undo=result.undo) == "Restored 2 memories from the trash."
    assert sorted(Memory.objects.filter(owner=user).values_list("pk", flat=True)) == sorted(m.pk for m in memories)


# --- The API --------------------------------------------------------------------------------------


def test_api_delete_lists_restores_purges_and_empties_the_trash(user, api):
    a, b, c = (make_memory(user, text) for text in (HERON, BUDGET, SOURDOUGH))
    for memory in (a, b, c):
        assert api.delete(f"/api/v1/memories/{memory.pk}").status_code == 204
    assert api.get(f"/api/v1/memories/{a.pk}").status_code == 404
    assert api.get("/api/v1/memories").json()["count"] == 0

    page = api.get("/api/v1/trash?limit=2").json()
    assert page["count"] == 3 and len(page["items"]) == 2
    item = page["items"][0]
    assert {"id", "title", "trashedAt", "trashedBy", "purgeAt", "chunkCount", "source"} <= item.keys()
    assert item["trashedBy"]

    restored = api.post(f"/api/v1/trash/{a.pk}/restore")
    assert restored.status_code == 200 and restored.json()["id"] == a.pk and restored.json()["content"] == HERON
    again = api.post(f"/api/v1/trash/{a.pk}/restore")
    assert again.status_code == 404 and "not in the trash" in again.json()["detail"]

    assert api.delete(f"/api/v1/trash/{b.pk}").status_code == 204
    gone = api.post(f"/api/v1/trash/{b.pk}/restore")
    assert gone.status_code == 404 and "deleted forever" in gone.json()["detail"]
    assert api.delete("/api/v1/trash").json() == {"purged": 1}
    assert api.get("/api/v1/trash").json()["count"] == 0


def test_another_user_can_neither_see_restore_nor_purge_my_trash(user, api, other_api):
    memory = make_memory(user, HERON)
    api.delete(f"/api/v1/memories/{memory.pk}")
    assert other_api.get("/api/v1/trash").json()["count"] == 0
    assert other_api.post(f"/api/v1/trash/{memory.pk}/restore").status_code == 404
    assert other_api.delete(f"/api/v1/trash/{memory.pk}").status_code == 404
    assert other_api.delete("/api/v1/trash").json() == {"purged": 0}
    assert Memory.all_objects.get(pk=memory.pk).trashed_at is not None


@pytest.mark.parametrize("bad", ["0", "-1", "99999999999999999999", "abc"])
def test_bad_trash_ids_are_a_clear_4xx(api, bad):
    assert api.post(f"/api/v1/trash/{bad}/restore").status_code in (404, 422)
    assert api.delete(f"/api/v1/trash/{bad}").status_code in (404, 422)


# --- The page and admin ---------------------------------------------------------------------------


def test_the_trash_page_lists_restores_and_deletes_forever(user, logged_in_client):
    a, b = make_memory(user, HERON), make_memory(user, BUDGET)
    logged_in_client.post(f"/memories/{a.pk}/delete/")
    logged_in_client.post(f"/memories/{b.pk}/delete/")
    page = logged_in_client.get("/memories/trash/").content.decode()
    assert a.title in page and b.title in page and "30 days left" in page and "by " + user.get_username() in page
    assert "Empty trash" in page and "Delete forever" in page

    response = logged_in_client.post(f"/memories/trash/{a.pk}/restore/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and f"Restored “{a.title}”" in response.content.decode()
    assert Memory.objects.filter(pk=a.pk).exists()
    logged_in_client.post(f"/memories/trash/{b.pk}/purge/")
    assert not Memory.all_objects.filter(pk=b.pk).exists()
    follow = logged_in_client.post(f"/memories/trash/{b.pk}/restore/", follow=True).content.decode()
    assert "deleted forever" in follow
    assert "The trash is empty" in logged_in_client.get("/memories/trash/").content.decode()


def test_admin_deletes_into_the_trash_and_restores_from_it(user, admin_client):
    memory = make_memory(user, HERON)
    admin_client.post(f"/admin/memories/memory/{memory.pk}/delete/", {"post": "yes"})
    assert Memory.all_objects.get(pk=memory.pk).trashed_at is not None
    listing = admin_client.get("/admin/memories/trashedmemory/").content.decode()
    assert memory.title in listing
    admin_client.post("/admin/memories/trashedmemory/", {"action": "restore_selected", "_selected_action": [memory.pk]})
    assert Memory.objects.filter(pk=memory.pk).exists()
    response = admin_client.post(
        "/admin/memories/memory/", {"action": "trash_selected", "_selected_action": [memory.pk]}, follow=True
    )
    assert "Moved 1 memory to the trash." in response.content.decode()
    assert Memory.all_objects.get(pk=memory.pk).trashed_by.startswith("admin ")


def test_a_page_request_names_the_person_who_trashed(user):
    client = Client()
    client.force_login(user)
    memory = make_memory(user, HERON)
    client.post(f"/memories/{memory.pk}/delete/")
    assert Memory.all_objects.get(pk=memory.pk).trashed_by == user.get_username()


# --- Export, import, MCP, connectors ----------------------------------------------------------------


def test_export_leaves_the_trash_out_unless_asked_and_import_puts_it_back_in_the_trash(user, tmp_path):
    from tests.portability.test_export_import import export_bytes, import_bytes, unpack

    live, gone = make_memory(user, HERON), make_memory(user, BUDGET)
    services.memory_delete(memory=gone)
    plain = unpack(export_bytes(user))
    assert [r["id"] for r in plain["memories"]] == [live.pk] and plain["manifest"]["includesTrash"] is False
    full = unpack(export_bytes(user, include_trash=True))
    assert sorted(r["id"] for r in full["memories"]) == sorted([live.pk, gone.pk])
    assert full["manifest"]["counts"]["trashed"] == 1
    [record] = [r for r in full["memories"] if r["id"] == gone.pk]
    assert record["trashedAt"] and record["trashedBy"] == "system"

    other = UserFactory()
    data = export_bytes(user, include_trash=True)
    report = import_bytes(other, data, "export.zip", tmp_path)
    assert report.created == 2
    [trashed] = Memory.all_objects.filter(owner=other, trashed_at__isnull=False)
    assert trashed.content == BUDGET and trashed.trashed_at.isoformat() == record["trashedAt"]
    assert set(MemoryChunk.objects.filter(memory=trashed).values_list("tier", flat=True)) == {TRASH_LAYER}
    assert trashed.pk not in found_ids(other, "quarterly budget review Marta")
    assert import_bytes(other, data, "export.zip", tmp_path).created == 0  # the trash counts as there
    # A live record of content in the trash restores it, as adding it again would.
    services.memory_restore_from_trash(owner=other, memory_id=trashed.pk)
    services.memory_delete(memory=trashed)
    import_bytes(other, export_bytes(user), "live.zip", tmp_path)
    assert Memory.all_objects.filter(owner=other, trashed_at__isnull=False).count() == 1  # BUDGET was not in it
    services.memory_delete(memory=Memory.objects.get(owner=other, content=HERON))
    import_bytes(other, export_bytes(user), "live.zip", tmp_path)
    assert Memory.objects.filter(owner=other, content=HERON).exists()


def test_a_connector_sync_leaves_a_trashed_memory_in_the_trash(user):
    from connectors.models import ConnectorItem
    from connectors.services import ItemSink
    from tests.factories import ConnectorAccountFactory, ConnectorItemFactory

    account = ConnectorAccountFactory(owner=user)
    memory = make_memory(user, HERON, source="connector")
    item = ConnectorItemFactory(
        account=account, external_id="doc-1", memory=memory, status=ConnectorItem.Status.SYNCED, error=""
    )
    services.memory_delete(memory=memory)
    sink = ItemSink(account)

    class Doc:
        external_id, title, mime, url, recheck = "doc-1", "Herons", "text/plain", "https://x", False
        modified_at = timezone.now()

        def load(self):
            raise AssertionError("a trashed item is not downloaded")

    sink.document(Doc())
    sink.removed("doc-1")
    memory = Memory.all_objects.get(pk=memory.pk)
    assert memory.trashed_at is not None and "archivedReason" not in memory.metadata
    assert ConnectorItem.objects.get(pk=item.pk).memory_id == memory.pk
    assert Memory.all_objects.filter(owner=user).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_restores_at_once_restore_it_once_and_the_other_is_told_why():
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection as conn

    owner = UserFactory()
    memory = make_memory(owner, HERON)
    services.memory_delete(memory=memory)

    def restore():
        try:
            services.memory_restore_from_trash(owner=owner, memory_id=memory.pk)
            return "restored"
        except Http404 as exc:
            return str(exc)
        finally:
            conn.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = sorted(pool.map(lambda _: restore(), range(2)))
    assert outcomes == [f"Memory {memory.pk} is not in the trash.", "restored"]
    assert lexical_state(owner.pk)[2][0] == MemoryChunk.objects.filter(memory_id=memory.pk).count()
