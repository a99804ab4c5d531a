"""A memory's language and its chunks': set on every write path, shown, and filterable."""

from __future__ import annotations

import pytest

from memories.models import Memory, MemoryChunk
from memories.services import chat_message_send, memories_autotag, memory_update, memory_version_restore
from portability import services as portability
from tests.factories import make_memory
from tests.languages import ENGLISH, FRENCH, GERMAN, JAPANESE

pytestmark = pytest.mark.django_db


def test_a_new_memory_and_its_chunk_get_the_language_of_the_content_not_of_the_title(user):
    memory = make_memory(user, GERMAN, title="Server migration notes")
    assert memory.language == "de"
    assert list(MemoryChunk.objects.filter(memory=memory).values_list("language", flat=True)) == ["de"]


def test_an_all_numbers_memory_has_no_language(user):
    statement = "\n".join(
        f"2024-03-{d:02d}  {d * 17.5:10.2f}  {d * 3.25:8.2f}  {1000 - d * 14:10.2f}" for d in range(1, 29)
    )
    assert make_memory(user, statement, title="Kontoauszug März").language == ""


def test_each_chunk_of_a_mixed_document_has_its_own_language(user, settings):
    text = "\n\n".join([GERMAN] * 14 + [ENGLISH] * 8)
    memory = make_memory(user, text, title="Bericht")
    languages = list(MemoryChunk.objects.filter(memory=memory).order_by("position").values_list("language", flat=True))
    assert memory.language == "de"
    assert len(languages) > 1 and languages[0] == "de" and languages[-1] == "en"


def test_chat_edit_and_restore_keep_the_language_true(user):
    _, message = chat_message_send(owner=user, content=FRENCH)
    assert message.language == "fr"
    edited = memory_update(memory=message, content=JAPANESE)
    assert edited.language == "ja"
    assert set(MemoryChunk.objects.filter(memory=edited).values_list("language", flat=True)) == {"ja"}
    restored = memory_version_restore(memory=edited, number=1)
    assert restored.language == "fr"
    assert set(MemoryChunk.objects.filter(memory=restored).values_list("language", flat=True)) == {"fr"}


def test_an_imported_memory_gets_its_language(user, other_user, tmp_path):
    make_memory(user, FRENCH, title="Migration")
    zipped = tmp_path / "kybernesis.zip"
    portability.export_to_file(owner=user, path=zipped)
    assert portability.import_path(owner=other_user, path=zipped).created == 1
    imported = Memory.objects.get(owner=other_user)
    assert imported.language == "fr"
    assert list(MemoryChunk.objects.filter(memory=imported).values_list("language", flat=True)) == ["fr"]


def test_rows_stored_before_languages_were_read_are_read_and_retagged_by_the_tag_step(user):
    memory = make_memory(user, GERMAN, title="Alt")
    Memory.objects.filter(pk=memory.pk).update(language=None, auto_tags=[{"tag": "und", "confidence": 0.9}])
    MemoryChunk.objects.filter(memory=memory).update(language=None)
    from django.utils import timezone

    from sleep.steps import Scope
    from sleep.steps.tag import TagStep

    assert TagStep().due(Scope(owner_id=user.pk, now=timezone.now())).filter(pk=memory.pk).exists()
    memories_autotag(memory_ids=[memory.pk])
    memory.refresh_from_db()
    assert memory.language == "de"
    assert "und" not in memory.tags
    assert list(MemoryChunk.objects.filter(memory=memory).values_list("language", flat=True)) == ["de"]


def test_the_api_shows_the_language_and_filters_lists_and_searches_by_it(api, user):
    german = make_memory(user, GERMAN, title="Umzug")
    make_memory(user, ENGLISH, title="Move")
    make_memory(user, "1 2 3 4 5 6 7 8 9", title="Numbers")
    read = api.get(f"/api/v1/memories/{german.pk}").json()
    assert (read["language"], read["languageName"]) == ("de", "German")
    assert [m["title"] for m in api.get("/api/v1/memories", {"language": "de"}).json()["items"]] == ["Umzug"]
    assert [m["title"] for m in api.get("/api/v1/memories", {"language": "und"}).json()["items"]] == ["Numbers"]
    found = api.get("/api/v1/search", {"q": "database server", "language": "de", "minScore": 0}).json()
    assert {r["title"] for r in found["results"]} == {"Umzug"}
    posted = api.post(
        "/api/v1/search", {"query": "database server", "minScore": 0, "filters": {"language": "en"}}
    ).json()
    assert {r["title"] for r in posted["results"]} == {"Move"}


@pytest.mark.parametrize("code", ["xx", "german", "e1"])
def test_an_unknown_language_code_is_a_422_with_a_reason(api, user, code):
    for response in (
        api.get("/api/v1/memories", {"language": code}),
        api.get("/api/v1/search", {"q": "server", "language": code}),
        api.post("/api/v1/search", {"query": "server", "filters": {"language": code}}),
    ):
        assert response.status_code == 422, response.content
        assert "language" in response.content.decode()


def test_the_openapi_schema_documents_the_language_filter_and_field(logged_in_client):
    schema = logged_in_client.get("/api/v1/openapi.json").json()
    text = str(schema)
    assert "languageName" in text and "ISO 639-1" in text


def test_the_memory_page_names_the_language_and_the_search_page_filters_by_it(logged_in_client, user):
    german = make_memory(user, GERMAN, title="Umzug")
    make_memory(user, ENGLISH, title="Move")
    page = logged_in_client.get(f"/memories/{german.pk}/").content.decode()
    assert 'id="memory-language"' in page and "German" in page
    search = logged_in_client.get("/search/", {"q": "database server", "language": "de", "weaker": "1"})
    body = search.content.decode()
    assert search.status_code == 200 and "Umzug" in body and ">Move<" not in body
    assert '<option value="de"' in body and "German (1)" in body
    bad = logged_in_client.get("/search/", {"q": "database", "language": "xx"})
    assert bad.status_code == 422 and "not a language code" in bad.content.decode()
