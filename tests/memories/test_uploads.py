"""Uploads: every format becomes a memory, bad files are refused one by one, big ones go to the queue."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from memories import services
from memories.models import Memory, UploadJob
from tests.files import BAD_FILES, make_docx, make_pdf

pytestmark = pytest.mark.django_db


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    """A file as it reaches the service: Django's safe name, plus the name the client sent."""
    file = SimpleUploadedFile(name, data)
    file.client_name = name
    return file


def post_files(api, files, **data):
    return Client().post("/api/v1/uploads", {"files": files, **data}, HTTP_AUTHORIZATION=f"Bearer {api.token}")


def test_each_supported_file_becomes_a_memory_titled_by_its_document_or_its_file(user):
    results = services.upload_files(
        owner=user,
        files=[
            upload("Team notes.md", b"# Notes\n\nAlice met the Product Team."),
            upload("report.pdf", make_pdf(["Page one about revenue.", "Page two about costs."])),
            upload("plan.docx", make_docx()),
            upload("script.py", b"print('hello')\n"),
        ],
        manual_tags=["Project X"],
    )
    assert [r.status for r in results] == ["created"] * 4
    notes, pdf, docx, code = (r.memory for r in results)
    assert notes.title == "Notes" and notes.source == "upload"  # its first # heading
    assert pdf.title == "report" and code.title == "script"  # no title of their own: the file name
    assert notes.metadata["filename"] == "Team notes.md" and notes.metadata["extension"] == "md"
    assert pdf.metadata["pageCount"] == 2 and "revenue" in pdf.content
    assert docx.content.startswith("# Quarterly plan")
    assert code.manual_tags == ["project-x"] and "py" in code.tags
    assert all(Memory.objects.get(pk=m.pk).chunks.exists() for m in (notes, pdf, docx, code))


def test_the_same_content_twice_points_at_the_existing_memory(user):
    [first] = services.upload_files(owner=user, files=[upload("a.txt", b"Same words.")])
    again, copy = services.upload_files(
        owner=user, files=[upload("b.txt", b"Same words."), upload("c.md", b"Same words.")]
    )
    assert (again.status, again.memory.pk) == ("duplicate", first.memory.pk)
    assert (copy.status, copy.memory.pk) == ("duplicate", first.memory.pk)
    assert Memory.objects.count() == 1


def test_two_copies_in_one_request_store_one_memory(user):
    first, copy = services.upload_files(owner=user, files=[upload("a.txt", b"Twice."), upload("b.txt", b"Twice.")])
    assert (first.status, copy.status) == ("created", "duplicate")
    assert copy.memory.pk == first.memory.pk and Memory.objects.count() == 1


def test_another_users_identical_file_is_not_a_duplicate(user, other_user):
    services.upload_files(owner=other_user, files=[upload("a.txt", b"Shared words.")])
    [result] = services.upload_files(owner=user, files=[upload("a.txt", b"Shared words.")])
    assert result.status == "created" and result.memory.owner == user


def test_a_large_file_is_queued_and_ingested_by_the_worker(user, settings, django_capture_on_commit_callbacks):
    settings.KYBERNESIS_ASYNC_UPLOAD_CHARS = 1000
    text = ("A long line of meeting notes about the budget. " * 60).encode()
    with django_capture_on_commit_callbacks(execute=True):
        [result] = services.upload_files(owner=user, files=[upload("long.txt", text)])
    assert result.status == "queued"
    job = UploadJob.objects.get(pk=result.job.pk)
    assert job.status == "done" and job.memory.content == text.decode() and job.text == ""
    assert services.upload_job_run(job_id=job.pk) is None, "a finished job is not run twice"


@pytest.mark.parametrize(("name", "data", "reason"), BAD_FILES, ids=[b[0][:20] for b in BAD_FILES])
def test_a_bad_file_is_rejected_with_its_reason_and_the_good_ones_are_still_stored(user, name, data, reason):
    results = services.upload_files(
        owner=user,
        files=[
            upload("good-1.txt", b"First good file."),
            upload(name, data),
            upload("good-2.md", b"Second good file."),
        ],
    )
    assert [r.status for r in results] == ["created", "rejected", "created"]
    assert reason in results[1].error
    assert sorted(Memory.objects.values_list("title", flat=True)) == ["good-1", "good-2"]


def test_a_20_mb_single_line_text_is_rejected_as_too_long(user, settings):
    settings.KYBERNESIS_MAX_UPLOAD_BYTES = 30 * 1024 * 1024
    [result] = services.upload_files(owner=user, files=[upload("line.txt", b"a" * (20 * 1024 * 1024))])
    assert result.status == "rejected" and "the limit is 5,000,000" in result.error
    assert result.http_status == 413
    assert not Memory.objects.exists() and not UploadJob.objects.exists()


def test_an_over_size_file_is_rejected_without_being_read(user, settings):
    settings.KYBERNESIS_MAX_UPLOAD_BYTES = 1024
    [result] = services.upload_files(owner=user, files=[upload("big.txt", b"b" * 2048)])
    assert result.status == "rejected" and "the file is 2 KB; the limit is 1 KB" in result.error
    assert result.http_status == 413 and not Memory.objects.exists()


def test_too_many_files_are_refused_as_a_whole(user, settings):
    settings.KYBERNESIS_MAX_FILES_PER_UPLOAD = 2
    with pytest.raises(services.MemoryTooLargeError):
        services.upload_files(owner=user, files=[upload(f"{i}.txt", b"x") for i in range(3)])
    assert not Memory.objects.exists()


# --- API ---------------------------------------------------------------------------------------


def test_the_upload_api_answers_one_result_per_file_in_order(api):
    response = post_files(
        api,
        [upload("a.md", b"Alpha notes."), upload("b.exe", b"MZ\x90\x00"), upload("c.txt", b"Gamma notes.")],
        tags="research, Q1",
    )
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [(r["filename"], r["status"]) for r in results] == [
        ("a.md", "created"),
        ("b.exe", "rejected"),
        ("c.txt", "created"),
    ]
    assert results[0]["memory"]["manualTags"] == ["research", "q1"]
    assert "not a supported file type" in results[1]["error"]


def test_a_queued_upload_answers_202_with_a_status_url(api, settings, django_capture_on_commit_callbacks):
    settings.KYBERNESIS_ASYNC_UPLOAD_CHARS = 100
    with django_capture_on_commit_callbacks(execute=True):
        response = post_files(api, [upload("long.txt", b"word " * 100)])
    assert response.status_code == 202
    [result] = response.json()["results"]
    assert result["status"] == "queued"
    status = api.get(result["statusUrl"]).json()
    assert status["status"] == "done" and status["memory"]["title"] == "long"


def test_another_users_upload_status_is_404(api, other_api, settings, django_capture_on_commit_callbacks):
    settings.KYBERNESIS_ASYNC_UPLOAD_CHARS = 100
    with django_capture_on_commit_callbacks(execute=True):
        result = post_files(api, [upload("long.txt", b"word " * 100)]).json()["results"][0]
    assert other_api.get(result["statusUrl"]).status_code == 404


def test_a_single_over_size_file_is_413(api, settings):
    settings.KYBERNESIS_MAX_UPLOAD_BYTES = 100
    response = post_files(api, [upload("big.txt", b"z" * 500)])
    assert response.status_code == 413 and "limit" in response.json()["detail"]


def test_too_many_files_is_413_and_no_files_is_422(api, settings):
    settings.KYBERNESIS_MAX_FILES_PER_UPLOAD = 1
    response = post_files(api, [upload("a.txt", b"a"), upload("b.txt", b"b")])
    assert response.status_code == 413 and "at most 1 file can be" in response.json()["detail"]
    assert post_files(api, []).status_code == 422
    assert not Memory.objects.exists()


@pytest.mark.parametrize("name", ["../../etc/passwd.txt", "..", "dir\\evil.txt", "bell\x07.txt", "n" * 300 + ".txt"])
def test_unsafe_names_sent_over_http_are_rejected_not_renamed(api, name):
    # Django's test client strips paths from file names itself, so the body is written by hand.
    boundary = "kybernesis-test-boundary"
    parts = []
    for filename, content in (("ok.txt", "Fine."), (name, "Hidden payload.")):
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{filename}"\r\n'
            f"Content-Type: text/plain\r\n\r\n{content}\r\n"
        )
    body = ("".join(parts) + f"--{boundary}--\r\n").encode()
    response = Client().post(
        "/api/v1/uploads",
        body,
        content_type=f"multipart/form-data; boundary={boundary}",
        HTTP_AUTHORIZATION=f"Bearer {api.token}",
    )
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["created", "rejected"], results
    assert not Memory.objects.filter(content="Hidden payload.").exists()


def test_uploading_needs_authentication():
    response = Client().post("/api/v1/uploads", {"files": [upload("a.txt", b"a")]})
    assert response.status_code == 401


# --- Page --------------------------------------------------------------------------------------


def test_the_upload_page_works_without_javascript(logged_in_client, user):
    page = logged_in_client.get("/upload/")
    assert page.status_code == 200 and b'id="dropzone"' in page.content
    # each file's result line (added by upload.js, or by the page itself) is read out as it arrives
    assert b'id="upload-list" aria-live="polite"' in page.content
    response = logged_in_client.post(
        "/upload/", {"files": [upload("a.md", b"Alpha."), upload("b.pdf", b"\x00\x01nope")], "tags": "inbox"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "created" in html and "rejected" in html and "not a PDF" in html
    assert Memory.objects.get(owner=user).manual_tags == ["inbox"]


def test_the_drop_zone_gets_just_the_result_row(logged_in_client):
    response = logged_in_client.post("/upload/", {"files": [upload("a.md", b"Alpha.")]}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html and 'class="upload-row status-created"' in html


def test_the_upload_page_shows_a_clear_message_for_too_many_files(logged_in_client, settings):
    settings.KYBERNESIS_MAX_FILES_PER_UPLOAD = 1
    response = logged_in_client.post("/upload/", {"files": [upload("a.md", b"A"), upload("b.md", b"B")]})
    assert response.status_code == 422 and "At most 1 file can be" in response.content.decode()


def test_a_queued_upload_row_polls_until_done(logged_in_client, user):
    job = UploadJob.objects.create(owner=user, filename="big.txt", title="big", text="x")
    row = logged_in_client.get(f"/memories/uploads/jobs/{job.pk}/").content.decode()
    assert "hx-get" in row and "pending" in row
    services.upload_job_run(job_id=job.pk)
    row = logged_in_client.get(f"/memories/uploads/jobs/{job.pk}/").content.decode()
    assert "hx-get" not in row and "done" in row
