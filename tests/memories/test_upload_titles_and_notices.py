"""Uploads: a memory is titled after its document when the document declares a title, and the notices
of its reading (the parser's and the normalisation's) are on the memory, in the upload result, on
the memory page and in the API."""

from __future__ import annotations

import pytest
from django.test import Client

from memories import services
from memories.models import Memory, UploadJob
from memories.services import uploads
from tests.memories.test_uploads import post_files, upload

pytestmark = pytest.mark.django_db

SCAN_NOTICE = "pages 1–3: no text layer, read by OCR"


@pytest.fixture
def declared(monkeypatch):
    """Files parse with the title and notices given here, as a format module sets Parsed.title and
    Parsed.notices (the registry passes them out as Extracted.title and Extracted.notices)."""
    given = {"title": None, "notices": []}
    real = uploads.extract

    def extract(name, data, **kwargs):
        extracted = real(name, data, **kwargs)
        extracted.title, extracted.notices = given["title"], list(given["notices"])
        return extracted

    monkeypatch.setattr(uploads, "extract", extract)
    return given


def test_a_document_s_own_title_becomes_the_memory_s_title(user, declared):
    declared["title"] = "Attention Is All You Need"
    [result] = services.upload_files(owner=user, files=[upload("1706.03762.txt", b"The Transformer.")])
    memory = Memory.objects.get(pk=result.memory.pk)
    assert memory.title == "Attention Is All You Need"
    assert memory.metadata["filename"] == "1706.03762.txt"
    assert memory.title_edited_at is None, "a title from the document is not a person's choice"


def test_without_a_title_in_the_document_the_file_name_is_the_title(user, declared):
    for number, title in enumerate((None, "", "   ", "\u200b")):
        declared["title"] = title
        [result] = services.upload_files(owner=user, files=[upload(f"bug{number}.txt", f"Text {number}.".encode())])
        assert result.memory.title == f"bug{number}"


def test_a_document_title_is_normalised_and_cut_at_a_word_when_very_long(user, declared):
    declared["title"] = "Conﬁguration\x07 " + "word " * 100
    [result] = services.upload_files(owner=user, files=[upload("a.txt", b"Body.")])
    assert result.memory.title.startswith("Configuration word word")
    assert len(result.memory.title) <= 201 and result.memory.title.endswith("…")


def test_an_explicit_title_given_with_an_api_upload_is_kept(api, declared):
    declared["title"] = "The Document's Own Title"
    response = post_files(api, [upload("file.txt", b"Body of the file.")], title="My own name for it")
    assert response.status_code == 200
    [result] = response.json()["results"]
    assert result["memory"]["title"] == "My own name for it"
    memory = Memory.objects.get(pk=result["memory"]["id"])
    assert memory.title_edited_at is not None, "a title given with the upload is the person's"


def test_a_title_for_several_files_at_once_is_refused(api):
    response = post_files(api, [upload("a.txt", b"One."), upload("b.txt", b"Two.")], title="Both")
    assert response.status_code == 422
    assert response.json()["field"] == "title"
    assert not Memory.objects.exists()


def test_the_api_upload_result_carries_the_notices_of_the_parser_and_the_normalisation(api, declared):
    declared["notices"] = [SCAN_NOTICE]
    response = post_files(api, [upload("scan.txt", b"Readable text.\n(cid:1)(cid:2)")])
    [result] = response.json()["results"]
    expected = [SCAN_NOTICE, "Dropped 14 characters that were not text: (cid:…) codes from a PDF (14)."]
    assert result["notices"] == expected
    assert result["memory"]["notices"] == expected
    assert Memory.objects.get().notices == expected


def test_a_rejected_file_has_no_notices(api):
    [result] = post_files(api, [upload("empty.txt", b"")]).json()["results"]
    assert result["status"] == "rejected" and result["notices"] == []


def test_a_queued_upload_keeps_its_notices_and_its_title(user, settings, declared, django_capture_on_commit_callbacks):
    settings.KYBERNESIS_ASYNC_UPLOAD_CHARS = 100
    declared["title"], declared["notices"] = "Annual Report 2024", [SCAN_NOTICE]
    with django_capture_on_commit_callbacks(execute=True):
        [result] = services.upload_files(owner=user, files=[upload("ar24.txt", b"Revenue grew. " * 20)])
    assert result.status == "queued" and result.notices == [SCAN_NOTICE]
    job = UploadJob.objects.get(pk=result.job.pk)
    assert job.status == "done"
    assert job.memory.title == "Annual Report 2024" and job.memory.notices == [SCAN_NOTICE]
    assert not {"_notices", "_titleChosen", "_original"} & set(job.memory.metadata)


def test_a_queued_upload_with_a_given_title_keeps_it_as_the_person_s(api, settings, django_capture_on_commit_callbacks):
    settings.KYBERNESIS_ASYNC_UPLOAD_CHARS = 100
    with django_capture_on_commit_callbacks(execute=True):
        response = post_files(api, [upload("x.txt", b"Long text here. " * 20)], title="Chosen")
    assert response.status_code == 202
    memory = Memory.objects.get()
    assert memory.title == "Chosen" and memory.title_edited_at is not None


def test_the_upload_page_shows_each_file_s_notices(logged_in_client, declared):
    declared["notices"] = [SCAN_NOTICE]
    response = logged_in_client.post("/upload/", {"files": [upload("scan.txt", b"Some text.")]})
    page = response.content.decode()
    assert response.status_code == 200
    assert 'class="notice-box"' in page and SCAN_NOTICE in page


def test_the_upload_page_shows_no_notice_box_for_a_clean_file(logged_in_client):
    page = logged_in_client.post("/upload/", {"files": [upload("clean.txt", b"Clean text.")]}).content.decode()
    assert "created" in page and 'class="notice-box"' not in page


def test_the_memory_page_shows_its_notices_and_the_file_name(logged_in_client, user, declared):
    declared["title"], declared["notices"] = "Attention Is All You Need", [SCAN_NOTICE]
    [result] = services.upload_files(owner=user, files=[upload("1706.03762.txt", b"Text.\n/g1/g2/g3")])
    page = logged_in_client.get(f"/memories/{result.memory.pk}/").content.decode()
    assert "<h1>Attention Is All You Need</h1>" in page
    assert 'class="notice-box" role="note"' in page
    assert SCAN_NOTICE in page and "glyph names from a PDF" in page
    assert "1706.03762.txt" in page


def test_the_memory_page_of_a_clean_memory_has_no_notice_box(logged_in_client, user):
    memory = services.memory_create(owner=user, title="Clean", content="Nothing to say about it.")
    page = Client()
    page.force_login(user)
    assert 'class="notice-box"' not in page.get(f"/memories/{memory.pk}/").content.decode()


def test_a_file_whose_only_text_is_glyph_names_is_refused_with_the_reason(api):
    response = post_files(api, [upload("glyphs.txt", b"/g145/g144/g3/g22 " * 50), upload("ok.txt", b"Fine.")])
    rejected, created = response.json()["results"]
    assert rejected["status"] == "rejected"
    assert "no text once what is not text is removed" in rejected["error"]
    assert "glyph names from a PDF" in rejected["error"]
    assert created["status"] == "created"
    assert Memory.objects.count() == 1


def test_a_prose_file_is_titled_by_its_heading_line_which_stays_in_its_content(user):
    data = "La creación\n\n1 En el principio creó Dios los cielos y la tierra.\n".encode()
    [result] = services.upload_files(owner=user, files=[upload("genesis-es.txt", data)])
    memory = Memory.objects.get(pk=result.memory.pk)
    assert memory.title == "La creación"
    assert memory.content.startswith("La creación\n\n1 En el principio")
