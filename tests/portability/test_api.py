"""GET /api/v1/export, POST /api/v1/import and its status, and the Export and import page."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from memories.models import ImportJob, Memory
from tests.factories import ImportJobFactory, make_memory

pytestmark = pytest.mark.django_db


def post_file(api, upload):
    return Client().post("/api/v1/import", {"file": upload}, HTTP_AUTHORIZATION=f"Bearer {api.token}")


def streamed(response) -> bytes:
    return b"".join(response.streaming_content)


def test_export_streams_a_zip_of_the_users_memories_only(api, user, other_user):
    make_memory(user, "Mine: the red notebook.")
    make_memory(other_user, "Theirs: the blue notebook.")
    response = api.get("/api/v1/export")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response.streaming and "attachment; filename=" in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(streamed(response))) as archive:
        lines = archive.read("memories.jsonl").decode().splitlines()
    assert [json.loads(line)["content"] for line in lines] == ["Mine: the red notebook."]


def test_export_without_vectors_leaves_the_chunks_out(api, user):
    make_memory(user, "A memory exported without its vectors.")
    with zipfile.ZipFile(io.BytesIO(streamed(api.get("/api/v1/export?vectors=false")))) as archive:
        record = json.loads(archive.read("memories.jsonl"))
        manifest = json.loads(archive.read("manifest.json"))
    assert "chunks" not in record and manifest["includesVectors"] is False


def test_export_and_import_need_credentials(client):
    assert client.get("/api/v1/export").status_code == 401
    assert client.post("/api/v1/import").status_code == 401


def test_import_answers_202_with_a_job_that_runs_in_the_worker(api, user, django_capture_on_commit_callbacks):
    notes = io.BytesIO()
    with zipfile.ZipFile(notes, "w") as archive:
        archive.writestr("Plan.md", "---\ntags: [work]\n---\nShip the importer.")
        archive.writestr("broken.md", "---\n: : :\n  - [\n---\nBody")
    upload = SimpleUploadedFile("vault.zip", notes.getvalue(), content_type="application/zip")
    with django_capture_on_commit_callbacks(execute=True):  # tests run tasks synchronously
        response = post_file(api, upload)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "pending" and body["statusUrl"] == f"/api/v1/import/{body['id']}"
    status = api.get(body["statusUrl"]).json()
    assert (status["status"], status["created"], status["failed"], status["total"]) == ("done", 1, 1, 2)
    assert status["errors"][0]["item"] == "broken.md" and "not YAML" in status["errors"][0]["error"]
    assert Memory.objects.get(owner=user).manual_tags == ["work"]
    assert not ImportJob.objects.get(pk=body["id"]).path  # the uploaded file is gone


def test_an_import_that_stops_midway_reports_what_it_stored(api, user, monkeypatch, django_capture_on_commit_callbacks):
    """A failure after the first batch leaves that batch's memories stored, and the job counts them
    rather than saying "failed, created 0"."""
    from portability.services import import_ as importing

    real_source, real, calls = importing.import_source, importing._store_batch, []
    monkeypatch.setattr(importing, "import_source", lambda **kwargs: real_source(**kwargs, batch_size=2))

    def fails_the_second_time(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the disk went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(importing, "_store_batch", fails_the_second_time)
    lines = "".join(json.dumps({"content": f"Imported memory {i}."}) + "\n" for i in range(5))
    upload = SimpleUploadedFile("notes.jsonl", lines.encode(), content_type="application/jsonl")
    with django_capture_on_commit_callbacks(execute=True):
        body = post_file(api, upload).json()
    status = api.get(body["statusUrl"]).json()
    assert Memory.objects.filter(owner=user).count() == 2
    assert (status["status"], status["created"], status["processed"]) == ("done", 2, 2)
    assert status["error"] == "the import stopped: the disk went away"


def test_import_refuses_a_file_it_cannot_read_with_a_reason(api):
    upload = SimpleUploadedFile("photo.png", b"\x89PNG...", content_type="image/png")
    response = post_file(api, upload)
    assert response.status_code == 422
    assert "photo.png looks like a PNG image, which Kybernesis does not import" in response.json()["detail"]
    empty = SimpleUploadedFile("empty.zip", b"", content_type="application/zip")
    assert post_file(api, empty).status_code == 422


def test_another_users_import_job_is_404(api, other_user):
    job = ImportJob.objects.create(owner=other_user, filename="theirs.zip")
    assert api.get(f"/api/v1/import/{job.pk}").status_code == 404


def test_the_page_shows_export_buttons_an_import_form_and_the_jobs(logged_in_client, user):
    ImportJob.objects.create(
        owner=user,
        filename="vault.zip",
        status="done",
        total=3,
        processed=3,
        created=2,
        failed=1,
        errors=[{"item": "latin1.md", "error": "not UTF-8 text (byte 3)"}],
    )
    page = logged_in_client.get("/memories/data/").content.decode()
    assert 'action="/api/v1/export"' in page and 'name="trash"' in page and 'name="file"' in page
    assert "vault.zip" in page and "latin1.md" in page and "not UTF-8 text" in page


def test_the_page_imports_an_upload_and_reports_a_bad_one(logged_in_client, user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in_client.post(
            "/memories/data/", {"file": SimpleUploadedFile("note.md", b"# A single note\nWith a body.")}, follow=True
        )
    assert "Importing note.md" in response.content.decode()
    assert Memory.objects.filter(owner=user, title="note").exists()
    response = logged_in_client.post("/memories/data/", {"file": SimpleUploadedFile("x.exe", b"MZ")}, follow=True)
    assert "x.exe looks like a Windows program, which Kybernesis does not import" in response.content.decode()


def test_a_running_import_of_unknown_size_shows_a_working_bar_not_a_full_one(logged_in_client, user):
    """max="0" is no valid maximum: browsers take 1, and 40 lines read of a .jsonl would show a full bar."""
    ImportJobFactory(owner=user, filename="notes.jsonl", status="running", total=None, processed=40)
    ImportJobFactory(owner=user, filename="export.zip", status="running", total=200, processed=40)
    page = logged_in_client.get("/memories/data/").content.decode()
    assert '<progress aria-label="Import progress">40 read</progress>' in page
    assert '<progress max="200" value="40" aria-label="Import progress">' in page
    assert 'max="0"' not in page
