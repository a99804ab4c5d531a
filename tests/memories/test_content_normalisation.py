"""Every door stores normalised text (core.normalise) with its notices: the API (create, batch, update),
chat, uploads and the admin's service calls all go through memory_input_prepare or memory_update."""

from __future__ import annotations

import pytest

from memories import services
from memories.models import Memory, content_hash

pytestmark = pytest.mark.django_db

RAW = "The conﬁguration of the com-\npiler\x07 is described\u200b here."
STORED = "The configuration of the compiler\nis described here."
GLYPHS = "/g145/g144/g3/g22" * 10


def test_a_memory_stores_the_normalised_text_and_its_hash_is_of_that_text(user):
    memory = services.memory_create(owner=user, title="Notes", content=RAW)
    memory.refresh_from_db()
    assert memory.content == STORED
    assert memory.content_hash == content_hash(STORED)
    assert all("ﬁ" not in chunk.text for chunk in memory.chunks.all())
    assert memory.notices == []


def test_the_same_document_with_and_without_ligatures_is_one_memory(api):
    first = api.post("/api/v1/memories", {"content": "A ﬁle about ﬂow control."})
    again = api.post("/api/v1/memories", {"content": "A file about flow control."})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Memory.objects.count() == 1


def test_dropped_garbage_is_recorded_as_a_notice_shown_by_the_api(api):
    response = api.post("/api/v1/memories", {"title": "Paper", "content": "Abstract: a real idea.\n" + GLYPHS})
    assert response.status_code == 201
    body = response.json()
    assert body["notices"] == ["Dropped 170 characters that were not text: glyph names from a PDF (170)."]
    detail = api.get(f"/api/v1/memories/{body['id']}").json()
    assert detail["content"] == "Abstract: a real idea.\n" and detail["notices"] == body["notices"]
    listed = api.get("/api/v1/memories").json()["items"][0]
    assert listed["notices"] == body["notices"]


def test_content_that_is_only_garbage_is_refused_with_the_reason(api):
    response = api.post("/api/v1/memories", {"content": GLYPHS})
    assert response.status_code == 422
    assert response.json()["field"] == "content"
    assert "no text once what is not text is removed" in response.json()["detail"]
    assert "glyph names from a PDF" in response.json()["detail"]
    assert not Memory.objects.exists()


def test_a_batch_normalises_each_item(api):
    response = api.post("/api/v1/memories/batch", {"items": [{"content": "ﬁrst"}, {"content": "Ｓｅｃｏｎｄ"}]})
    assert response.status_code == 201
    assert sorted(Memory.objects.values_list("content", flat=True)) == ["Second", "first"]


def test_an_update_that_changes_the_content_recomputes_the_notices(api, user):
    memory = services.memory_create(owner=user, title="Scan", content="Page one.", notices=["pages 2–3: no text layer"])
    assert memory.notices == ["pages 2–3: no text layer"]

    changed = api.patch(f"/api/v1/memories/{memory.pk}", {"content": "Page one, typed again.\n(cid:3)(cid:4)"})

    assert changed.status_code == 200
    assert changed.json()["content"] == "Page one, typed again.\n"
    assert changed.json()["notices"] == ["Dropped 14 characters that were not text: (cid:…) codes from a PDF (14)."]
    cleaned = api.patch(f"/api/v1/memories/{memory.pk}", {"content": "Page one, typed again."})
    assert cleaned.json()["notices"] == []


def test_an_update_that_leaves_the_content_as_it_was_keeps_the_notices(api, user):
    memory = services.memory_create(owner=user, title="Scan", content="Page one.", notices=["pages 2–3: no text layer"])
    for payload in ({"title": "Renamed"}, {"content": "Page one."}, {"content": "Page one.\u200b"}):
        body = api.patch(f"/api/v1/memories/{memory.pk}", payload).json()
        assert body["notices"] == ["pages 2–3: no text layer"], payload


def test_an_update_normalises_the_new_content(user):
    memory = services.memory_create(owner=user, title="Draft", content="First draft.")
    updated = services.memory_update(memory=memory, content="Second   ﬁnal draft.")
    assert updated.content == "Second final draft."
    assert Memory.objects.get(pk=memory.pk).content_hash == content_hash("Second final draft.")


def test_a_chat_message_is_stored_normalised(api):
    body = api.post("/api/v1/chat/messages", {"content": "Remember the ﬁnal ＩＤ is 42\x07."}).json()
    assert body["memory"]["content"] == "Remember the final ID is 42."
    assert body["memory"]["notices"] == []


def test_titles_are_normalised_like_the_text(api):
    body = api.post("/api/v1/memories", {"title": "Conﬁguration\u200b Guide", "content": "Body."}).json()
    assert body["title"] == "Configuration Guide"


def test_the_source_s_notices_and_the_normalisation_s_are_both_kept_once(user):
    memory = services.memory_create(
        owner=user,
        title="Paper",
        content="Real text.\n(cid:1)",
        notices=["pages 1–3: no text layer, read by OCR", "pages 1–3: no text layer, read by OCR"],
    )
    assert memory.notices == [
        "pages 1–3: no text layer, read by OCR",
        "Dropped 7 characters that were not text: (cid:…) codes from a PDF (7).",
    ]


@pytest.mark.parametrize("notices", ["one string", [1, 2], [{"text": "x"}]])
def test_notices_that_are_not_a_list_of_strings_are_refused(user, notices):
    with pytest.raises(services.MemoryInputError, match="notices must be a list of strings"):
        services.memory_create(owner=user, title="x", content="Body.", notices=notices)


def test_a_deleted_memory_brought_back_by_undo_keeps_its_notices(user):
    from memories.services.bulk import memories_bulk, memories_bulk_undo

    memory = services.memory_create(owner=user, title="Scan", content="Page one.", notices=["pages 2–3: no text layer"])
    result = memories_bulk(owner=user, memory_ids=[memory.pk], action="delete")
    memories_bulk_undo(owner=user, undo=result.undo)
    assert Memory.objects.get().notices == ["pages 2–3: no text layer"]


def test_a_chat_session_is_titled_from_the_normalised_message(user):
    session, memory = services.chat_message_send(owner=user, content="Conﬁrm the ＦＬＩＧＨＴ\u200b tomorrow")
    assert session.title == "Confirm the FLIGHT tomorrow" == memory.title
