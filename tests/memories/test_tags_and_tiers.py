"""Manual tags, pinning, priority and retiering through the services, the API and the pages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graph.models import MemoryLink
from memories import services
from memories.models import Memory, MemoryChunk, TierMove
from tests.factories import make_memory


def age(memory: Memory, *, days: float, **fields) -> Memory:
    """Pretend the memory was created and last opened `days` ago (the database sets created_at itself)."""
    then = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(created_at=then, last_accessed_at=then, **fields)
    memory.refresh_from_db()
    return memory


def link(a: Memory, b: Memory, *, days_ago: float = 30, reason=MemoryLink.Reason.SHARED_TAGS) -> MemoryLink:
    source, target = sorted((a, b), key=lambda m: m.pk)
    when = timezone.now() - timedelta(days=days_ago)
    row = MemoryLink.objects.create(owner=a.owner, source=source, target=target, reason=reason, score=0.5,
                                    confidence=0.5, last_reinforced_at=when)
    MemoryLink.objects.filter(pk=row.pk).update(created_at=when)
    return row


# --- Ingest -----------------------------------------------------------------------------------------


def test_a_new_memory_is_hot_with_a_reason_and_a_computed_priority(user):
    memory = make_memory(user, content="Notes from the kickoff about the onboarding flow redesign.")
    assert memory.tier == "hot" and memory.tier_reason.startswith("decay 0.00")
    assert memory.priority == pytest.approx(0.22 + 0.06 * (0.0 if len(memory.content) <= 100 else
                                                         min(1, __import__("math").log10(len(memory.content) / 100) / 3)),
                                            abs=1e-3)
    assert [t["tag"] for t in memory.auto_tags][0] == "upload"
    assert len(memory.auto_tags) <= 6 and memory.auto_tagged_hash == memory.content_hash


def test_a_priority_given_at_ingest_is_kept(user):
    assert make_memory(user, priority=0.9).priority == 0.9


# --- Manual tags --------------------------------------------------------------------------------------


def test_manual_tags_are_added_normalised_and_kept_apart_from_auto_tags(user):
    memory = make_memory(user)
    memory = services.memory_tags_add(memory=memory, tags=["  Project X ", "review needed", "project x"])
    assert memory.manual_tags == ["project-x", "review-needed"]
    assert memory.tags[:2] == ["project-x", "review-needed"]
    assert set(memory.tags) == {*memory.manual_tags, *(t["tag"] for t in memory.auto_tags)}
    memory = services.memory_tag_remove(memory=memory, tag="Project X")
    assert memory.manual_tags == ["review-needed"] and "project-x" not in memory.tags


def test_manual_tags_survive_auto_retagging(user):
    memory = make_memory(user, manual_tags=["keep-me"])
    Memory.objects.filter(pk=memory.pk).update(auto_tagged_at=timezone.now() - timedelta(days=8))
    result = services.memories_autotag(memory_ids=[memory.pk])
    memory.refresh_from_db()
    assert result.processed == 1 and memory.manual_tags == ["keep-me"] and memory.tags[0] == "keep-me"


def test_retagging_skips_memories_tagged_within_seven_days(user):
    fresh = make_memory(user, content="Fresh note about gardening tomatoes.")
    stale = make_memory(user, content="Stale note about sailing boats.")
    Memory.objects.filter(pk=stale.pk).update(auto_tagged_at=timezone.now() - timedelta(days=7, minutes=1),
                                              auto_tags=[])
    before = Memory.objects.get(pk=fresh.pk).auto_tagged_at
    result = services.memories_autotag(memory_ids=[fresh.pk, stale.pk])
    assert (result.processed, result.changed) == (2, 1)
    assert Memory.objects.get(pk=fresh.pk).auto_tagged_at == before
    assert Memory.objects.get(pk=stale.pk).auto_tags


def test_a_memory_whose_tagging_fails_is_reported_and_the_rest_are_tagged(user, monkeypatch):
    from memories import tagging

    good = make_memory(user, content="Sailing boats need their rigging checked every spring.")
    bad = make_memory(user, content="This text breaks the keyword extractor.")
    Memory.objects.filter(pk__in=[good.pk, bad.pk]).update(auto_tagged_at=None, auto_tags=[])
    real = tagging.auto_tags_for

    def fragile(**kwargs):
        if "breaks" in kwargs["content"]:
            raise ValueError("extractor gave up")
        return real(**kwargs)

    monkeypatch.setattr(tagging, "auto_tags_for", fragile)
    result = services.memories_autotag(memory_ids=[good.pk, bad.pk])
    assert result.processed == 2 and result.failed == [(bad.pk, "ValueError: extractor gave up")]
    good.refresh_from_db()
    bad.refresh_from_db()
    assert any("sailing" in t or "rigging" in t for t in good.tags) and good.auto_tagged_hash == good.content_hash
    assert bad.auto_tags == [] and bad.auto_tagged_at is None  # left as it was, due again next cycle


def test_a_content_change_retags_at_once(user):
    memory = make_memory(user, content="Sourdough starter feeding schedule and hydration.")
    memory = services.memory_update(memory=memory, content="Kubernetes cluster upgrade runbook for the platform.")
    tags = [t["tag"] for t in memory.auto_tags]
    assert not any("sourdough" in t for t in tags) and any("kubernetes" in t or "cluster" in t for t in tags)
    assert memory.auto_tagged_hash == memory.content_hash


@pytest.mark.parametrize("write", [
    lambda m: services.memory_update(memory=m, manual_tags=["a", "b"]),
    lambda m: services.memory_update(memory=m, content="Entirely new text about rockets."),
    lambda m: services.memory_update(memory=m, metadata={"filename": "x.pdf"}),
    lambda m: services.memory_tags_add(memory=m, tags=["c"]),
    lambda m: services.memory_pin(memory=m, pinned=True),
    lambda m: services.memories_autotag(memory_ids=[m.pk], force=True),
])
def test_combined_tags_stay_consistent_after_every_kind_of_write(user, write):
    memory = make_memory(user, manual_tags=["first"])
    write(memory)
    memory.refresh_from_db()
    expected = list(dict.fromkeys([*memory.manual_tags, *(t["tag"] for t in memory.auto_tags)]))
    assert memory.tags == expected


@pytest.mark.parametrize(("tags", "message"), [
    ([""], "cannot be empty"),
    (["x" * 65], "65 characters"),
    ([], "at least one tag"),
])
def test_bad_manual_tags_are_refused(user, tags, message):
    memory = make_memory(user)
    with pytest.raises(services.MemoryInputError, match=message):
        services.memory_tags_add(memory=memory, tags=tags)


def test_the_fifty_first_manual_tag_is_refused_and_nothing_changes(user):
    memory = make_memory(user, manual_tags=[f"t{i}" for i in range(50)])
    with pytest.raises(services.MemoryInputError, match="at most 50 manual tags"):
        services.memory_tags_add(memory=memory, tags=["one-more"])
    memory.refresh_from_db()
    assert len(memory.manual_tags) == 50 and "one-more" not in memory.tags


# --- Tiers ----------------------------------------------------------------------------------------------


def test_bulk_retier_moves_memories_records_each_move_and_moves_their_chunks(user):
    old = age(make_memory(user, content="An old note nobody reads any more."), days=60, priority=0.1)
    tagged = age(make_memory(user, content="An old tagged note.", manual_tags=["keep"]), days=60, priority=0.1)
    result = services.memories_retier(owner=user)
    assert result.moves == {"hot→archive": 1, "hot→warm": 1}
    old.refresh_from_db()
    tagged.refresh_from_db()
    assert (old.tier, tagged.tier) == ("archive", "warm")
    assert tagged.tier_reason == "has manual tags"
    assert set(MemoryChunk.objects.filter(memory=old).values_list("tier", flat=True)) == {"archive"}
    move = TierMove.objects.get(memory=old)
    assert (move.from_tier, move.to_tier, move.cause) == ("hot", "archive", "sleep")
    assert "not accessed for 60 days" in move.reason


def test_bulk_retier_uses_the_same_few_queries_for_any_number_of_memories(user):
    memories = [age(make_memory(user, content=f"Note number {i} about things."), days=60, priority=0.1)
                for i in range(12)]
    counts = []
    for ids in ([memories[0].pk], [m.pk for m in memories[1:]]):
        Memory.objects.filter(pk__in=ids).update(tier="hot")
        with CaptureQueriesContext(connection) as queries:
            services.memories_retier(memory_ids=ids)
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 8


def test_links_count_as_relationships_and_recent_connections(user):
    hub = age(make_memory(user, content="The hub memory."), days=60, priority=0.1)
    others = [make_memory(user, content=f"Spoke {i}.") for i in range(6)]
    for other in others[:3]:
        link(hub, other)
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert (hub.tier, hub.tier_reason) == ("warm", "3 relationships (≥ 3)")
    for other in others[3:]:
        link(hub, other, days_ago=1)
    link(hub, others[0], days_ago=1, reason=MemoryLink.Reason.SEMANTIC)  # a second reason is the same memory
    services.memories_retier(memory_ids=[hub.pk])
    hub.refresh_from_db()
    assert (hub.tier, hub.tier_reason) == ("hot", "6 relationships (≥ 6)")


def test_pinning_moves_to_hot_at_once_and_overrides_everything(user):
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    memory.refresh_from_db()
    assert memory.tier == "archive"
    memory = services.memory_pin(memory=memory, pinned=True)
    assert (memory.tier, memory.tier_reason, memory.pinned) == ("hot", "pinned", True)
    assert set(memory.chunks.values_list("tier", flat=True)) == {"hot"}
    services.memories_retier(memory_ids=[memory.pk])
    memory.refresh_from_db()
    assert memory.tier == "hot"
    memory = services.memory_pin(memory=memory, pinned=False)
    assert memory.tier == "archive"  # unpinned, every archive condition holds again
    assert list(memory.tier_moves.values_list("cause", flat=True)) == ["pin", "pin", "sleep"]


def test_changing_priority_retiers_at_once(user):
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    memory = services.memory_update(memory=memory, priority=0.7)
    assert (memory.tier, memory.tier_reason) == ("hot", "priority 0.70 ≥ 0.65")


# --- Storage layers -----------------------------------------------------------------------------------------


def _vector_plan(user, tiers) -> str:
    from memories import search

    params = {"owner": user.pk, "qvec": "[" + ",".join(["0.1"] * 384) + "]", "k_vec": 10}
    layers = " UNION ALL ".join(
        f"(SELECT c.id FROM memories_memorychunk c WHERE c.owner_id = %(owner)s AND {layer} "
        "ORDER BY c.embedding <=> %(qvec)s::vector LIMIT %(k_vec)s)"
        for layer in search._vector_layers(tiers))
    with connection.cursor() as cursor:
        # A tiny test table is cheaper to scan and sort than to walk an HNSW graph; price those plans out so
        # the plan shows which vector index a large collection would use.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + layers, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_hot_and_warm_search_reads_only_the_active_index(user):
    plan = _vector_plan(user, ("hot", "warm"))
    assert "memorychunk_hnsw_active" in plan and "memorychunk_hnsw_archive" not in plan
    plan = _vector_plan(user, ("hot",))
    assert "memorychunk_hnsw_active" in plan and "memorychunk_hnsw_archive" not in plan


def test_a_search_of_every_tier_reads_both_layers(user):
    plan = _vector_plan(user, ())
    assert "memorychunk_hnsw_active" in plan and "memorychunk_hnsw_archive" in plan


def test_archived_memories_stay_searchable_and_the_tier_filter_excludes_them(user):
    from memories.search import SearchFilters, hybrid_search

    archived = age(make_memory(user, content="Zanzibar spice market trip itinerary."), days=90, priority=0.0)
    services.memories_retier(memory_ids=[archived.pk])
    assert Memory.objects.get(pk=archived.pk).tier == "archive"
    found = hybrid_search(user, "Zanzibar spice market", track_access=False)
    assert [r.memory_id for r in found.results][:1] == [archived.pk] and found.results[0].tier == "archive"
    active_only = hybrid_search(user, "Zanzibar spice market", track_access=False,
                                filters=SearchFilters(tiers=("hot", "warm")))
    assert archived.pk not in {r.memory_id for r in active_only.results}


# --- API ----------------------------------------------------------------------------------------------------


def test_api_adds_and_removes_manual_tags(api, user):
    memory = make_memory(user)
    body = api.post(f"/api/v1/memories/{memory.pk}/tags", {"tags": ["Launch Plan", "q1"]}).json()
    assert body["manualTags"] == ["launch-plan", "q1"] and body["tags"][:2] == ["launch-plan", "q1"]
    body = api.delete(f"/api/v1/memories/{memory.pk}/tags/launch-plan").json()
    assert body["manualTags"] == ["q1"]
    response = api.delete(f"/api/v1/memories/{memory.pk}/tags/nope")
    assert response.status_code == 404 and "no manual tag 'nope'" in response.json()["detail"]


@pytest.mark.parametrize(("payload", "reason"), [
    ({"tags": [""]}, "cannot be empty"),
    ({"tags": ["x" * 65]}, "65 characters"),
    ({"tags": "single-string"}, None),
    ({"tags": [1]}, None),
    ({}, None),
    ({"tags": ["ok"], "extra": 1}, None),
])
def test_api_refuses_bad_tags_with_422(api, user, payload, reason):
    memory = make_memory(user)
    response = api.post(f"/api/v1/memories/{memory.pk}/tags", payload)
    assert response.status_code == 422
    if reason:
        assert reason in response.json()["detail"]


def test_api_refuses_the_fifty_first_manual_tag(api, user):
    memory = make_memory(user, manual_tags=[f"t{i}" for i in range(50)])
    response = api.post(f"/api/v1/memories/{memory.pk}/tags", {"tags": ["t50"]})
    assert response.status_code == 422 and "at most 50" in response.json()["detail"]


def test_api_pins_and_unpins(api, user):
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    body = api.post(f"/api/v1/memories/{memory.pk}/pin").json()
    assert (body["pinned"], body["tier"], body["tierReason"]) == (True, "hot", "pinned")
    assert body["tierHistory"][0]["toTier"] == "hot" and body["tierHistory"][0]["cause"] == "pin"
    body = api.delete(f"/api/v1/memories/{memory.pk}/pin").json()
    assert body["pinned"] is False


def test_another_users_memory_is_a_404_for_tags_and_pins(api, other_user):
    theirs = make_memory(other_user, manual_tags=["private"])
    for response in (api.post(f"/api/v1/memories/{theirs.pk}/pin"),
                     api.delete(f"/api/v1/memories/{theirs.pk}/pin"),
                     api.post(f"/api/v1/memories/{theirs.pk}/tags", {"tags": ["x"]}),
                     api.delete(f"/api/v1/memories/{theirs.pk}/tags/private")):
        assert response.status_code == 404
    theirs.refresh_from_db()
    assert (theirs.pinned, theirs.manual_tags) == (False, ["private"])


@pytest.mark.parametrize("priority", ["0.5", "high", 1.5, -0.1, True, None])
def test_api_refuses_a_priority_that_is_not_a_number_from_0_to_1(api, user, priority):
    memory = make_memory(user, priority=0.4)
    assert api.patch(f"/api/v1/memories/{memory.pk}", {"priority": priority}).status_code == 422
    memory.refresh_from_db()
    assert memory.priority == 0.4


def test_api_lists_tags_with_counts_and_filters_memories_by_any_tag(api, user, other_user):
    make_memory(user, content="Budget one.", manual_tags=["finance"])
    make_memory(user, content="Budget two.", manual_tags=["finance", "q4"])
    make_memory(other_user, content="Not yours.", manual_tags=["finance"])
    items = {i["tag"]: i for i in api.get("/api/v1/tags").json()["items"]}
    assert (items["finance"]["count"], items["finance"]["manual"]) == (2, 2)
    assert items["upload"]["count"] == 2 and items["upload"]["manual"] == 0
    assert [i["tag"] for i in api.get("/api/v1/tags", {"prefix": "fin"}).json()["items"]] == ["finance"]
    assert api.get("/api/v1/memories", {"tag": "upload"}).json()["count"] == 2
    assert api.get("/api/v1/memories", {"tag": ["finance", "q4"]}).json()["count"] == 1
    assert api.get("/api/v1/tags", {"limit": 0}).status_code == 422


# --- Pages ----------------------------------------------------------------------------------------------------


def test_memory_page_shows_tier_reason_decay_priority_tags_and_history(logged_in_client, user):
    memory = age(make_memory(user, manual_tags=["mine"]), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    services.memory_pin(memory=memory, pinned=True)
    html = logged_in_client.get(f"/memories/{memory.pk}/").content.decode()
    for text in ("pinned", "Decay", "Priority", "Last accessed", "Tier history", "moved to hot on",
                 'class="badge tag-manual"', 'class="badge tag-auto" href', "Auto tag · confidence", 'type="range"'):
        assert text in html


def test_the_tag_editor_adds_and_removes_and_shows_errors(logged_in_client, user):
    memory = make_memory(user)
    url = f"/memories/{memory.pk}/tags/"
    response = logged_in_client.post(url, {"tags": "Alpha, beta gamma"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "beta-gamma" in response.content.decode()
    assert Memory.objects.get(pk=memory.pk).manual_tags == ["alpha", "beta-gamma"]
    response = logged_in_client.post(url, {"remove": "alpha"}, HTTP_HX_REQUEST="true")
    assert Memory.objects.get(pk=memory.pk).manual_tags == ["beta-gamma"]
    response = logged_in_client.post(url, {"tags": "x" * 65}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and "65 characters" in response.content.decode()
    response = logged_in_client.post(url, {"tags": "x" * 65})  # without JavaScript: back to the page
    assert response.status_code == 302
    assert "65 characters" in logged_in_client.get(response["Location"]).content.decode()


def test_priority_slider_saves_and_refuses_bad_values(logged_in_client, user):
    memory = make_memory(user)
    url = f"/memories/{memory.pk}/priority/"
    assert logged_in_client.post(url, {"priority": "0.7"}, HTTP_HX_REQUEST="true").status_code == 200
    assert Memory.objects.get(pk=memory.pk).priority == 0.7
    for bad in ("abc", "1.5", ""):
        response = logged_in_client.post(url, {"priority": bad}, HTTP_HX_REQUEST="true")
        assert response.status_code == 422 and 'role="alert"' in response.content.decode()
    assert Memory.objects.get(pk=memory.pk).priority == 0.7


def test_pin_toggle_on_the_list_swaps_the_row(logged_in_client, user):
    memory = make_memory(user)
    response = logged_in_client.post(f"/memories/{memory.pk}/pin/", {"pinned": "1", "from": "list"},
                                     HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and f'id="memory-{memory.pk}"' in html and 'aria-pressed="true"' in html
    assert Memory.objects.get(pk=memory.pk).pinned


def test_pages_of_another_users_memory_are_404(logged_in_client, other_user):
    theirs = make_memory(other_user)
    for path in ("pin", "priority", "tags"):
        assert logged_in_client.post(f"/memories/{theirs.pk}/{path}/", {"pinned": "1", "priority": "1",
                                                                        "tags": "x"}).status_code == 404
    assert logged_in_client.get(f"/memories/{theirs.pk}/tier/").status_code == 404


def test_tag_page_lists_the_users_tags_with_counts(logged_in_client, user, other_user):
    make_memory(user, manual_tags=["finance"])
    make_memory(other_user, manual_tags=["secret-project"])
    html = logged_in_client.get("/memories/tags/").content.decode()
    assert "finance" in html and "secret-project" not in html and "/memories/?tag=finance" in html
    assert "No tag starts with" in logged_in_client.get("/memories/tags/", {"q": "zzz"}).content.decode()


def test_memory_list_filters_by_tier_tag_and_source(logged_in_client, user):
    keep = make_memory(user, content="Hot note.", manual_tags=["alpha"])
    old = age(make_memory(user, content="Old note."), days=90, priority=0.0)
    services.memories_retier(memory_ids=[old.pk])
    html = logged_in_client.get("/memories/", {"tier": "archive"}).content.decode()
    assert "Old note" in html and "Hot note" not in html
    html = logged_in_client.get("/memories/", {"tag": "alpha", "source": "upload"}).content.decode()
    assert f'id="memory-{keep.pk}"' in html and "Old note" not in html


def test_a_memory_edited_in_admin_is_retiered_with_its_chunks(client, user):
    from django.contrib.auth import get_user_model

    admin_user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-for-admin-123")
    client.force_login(admin_user)
    memory = age(make_memory(user), days=90, priority=0.0)
    services.memories_retier(memory_ids=[memory.pk])
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update({"owner": user.pk, "priority": "0.9", "pinned": "", "manual_tags": "", "metadata": "{}",
                 "last_accessed_at_0": "", "last_accessed_at_1": "",
                 "chunks-TOTAL_FORMS": "0", "chunks-INITIAL_FORMS": "0"})
    data = {k: v for k, v in data.items() if v is not None}
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    memory.refresh_from_db()
    assert (memory.priority, memory.tier) == (0.9, "hot")
    assert set(memory.chunks.values_list("tier", flat=True)) == {"hot"}


def test_a_content_edit_in_admin_is_rechunked_embedded_and_found_by_search(client, user):
    from django.contrib.auth import get_user_model

    from memories.search import hybrid_search

    admin_user = get_user_model().objects.create_superuser("root2", "root2@example.com", "pw-for-admin-123")
    client.force_login(admin_user)
    memory = make_memory(user, title="Garden", content="Tomatoes need full sun and deep watering twice a week.")
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update({"content": "Tomatoes need full sun. Plant marigolds beside them against aphids.",
                 "manual_tags": "", "metadata": "{}", "pinned": "",
                 "chunks-TOTAL_FORMS": "0", "chunks-INITIAL_FORMS": "0"})
    data = {k: v for k, v in data.items() if v is not None}
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    chunk_texts = list(MemoryChunk.objects.filter(memory=memory).values_list("text", flat=True))
    assert any("marigolds" in text for text in chunk_texts)
    response = hybrid_search(user, "marigolds", limit=5)
    assert response.results and response.results[0].memory_id == memory.pk
    assert "marigolds" in response.results[0].text


def test_a_bad_value_in_admin_is_shown_on_its_field_and_changes_nothing(client, user):
    from django.contrib.auth import get_user_model

    admin_user = get_user_model().objects.create_superuser("root3", "root3@example.com", "pw-for-admin-123")
    client.force_login(admin_user)
    memory = make_memory(user, title="Garden", content="Tomatoes need full sun.")
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update({"content": "   ", "manual_tags": "", "metadata": "{}", "pinned": "",
                 "chunks-TOTAL_FORMS": "0", "chunks-INITIAL_FORMS": "0"})
    data = {k: v for k, v in data.items() if v is not None}
    response = client.post(url, data)
    assert response.status_code == 200
    assert "content is empty" in response.content.decode() or "This field is required" in response.content.decode()
    memory.refresh_from_db()
    assert memory.content == "Tomatoes need full sun."
