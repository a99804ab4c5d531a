"""The new sources at the doors: POST /api/v1/import tells them by content, the page says where to get
each file and shows what an import left out, and a server-side path is read only inside allowed folders."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from memories.models import ChatSession, ImportJob, Memory
from memories.services import MemoryInputError
from portability import services as portability
from tests.portability.chat_exports import chatgpt_conversation, claude_conversation, write_json

pytestmark = pytest.mark.django_db

CHAT = chatgpt_conversation(
    "conv-api", "Garden", [("u", "user", "When do I plant garlic?", 1), ("a", "assistant", "In autumn.", 2)]
)


def post_file(api, upload):
    return Client().post("/api/v1/import", {"file": upload}, HTTP_AUTHORIZATION=f"Bearer {api.token}")


def test_the_api_takes_a_chatgpt_export_by_its_content_whatever_its_name(api, user, django_capture_on_commit_callbacks):
    upload = SimpleUploadedFile(
        "download (3).bin", json.dumps([CHAT]).encode(), content_type="application/octet-stream"
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = post_file(api, upload)
    assert response.status_code == 202 and response.json()["kind"] == "chatgpt"
    status = api.get(response.json()["statusUrl"]).json()
    assert (status["status"], status["kind"], status["created"]) == ("done", "chatgpt", 2)
    assert status["notices"][0] == "ChatGPT export: 1 conversation and 2 messages read."
    assert Memory.objects.filter(owner=user, source="chat").count() == 2


def test_the_api_takes_a_claude_export(api, user, django_capture_on_commit_callbacks):
    conversation = claude_conversation("c-api", "Bread", [("m1", "human", "Why does dough rise?", 1)])
    upload = SimpleUploadedFile("conversations.json", json.dumps([conversation]).encode())
    with django_capture_on_commit_callbacks(execute=True):
        body = post_file(api, upload).json()
    assert api.get(body["statusUrl"]).json()["kind"] == "claude"
    assert Memory.objects.get(owner=user).metadata["importedFrom"] == "claude"


def test_the_api_refuses_what_no_reader_takes_saying_what_it_looks_like(api, user):
    response = post_file(api, SimpleUploadedFile("conversations.json", b"%PDF-1.7\n1 0 obj"))
    assert response.status_code == 422
    assert "conversations.json looks like a PDF" in response.json()["detail"]
    grok = json.dumps({"conversations": [{"conversation": {}, "responses": []}]}).encode()
    assert "a Grok (xAI) export" in post_file(api, SimpleUploadedFile("conversations.json", grok)).json()["detail"]
    assert not ImportJob.objects.filter(owner=user).exists()


def test_the_page_says_where_to_get_each_export_and_shows_what_an_import_left_out(logged_in_client, user):
    ImportJob.objects.create(
        owner=user,
        filename="chatgpt-export.zip",
        kind="chatgpt",
        status="done",
        processed=120,
        created=118,
        notices=["ChatGPT export: 9 conversations and 118 messages read.", "2 messages on branches … left out."],
    )
    page = logged_in_client.get("/memories/data/").content.decode()
    assert "Settings › Data controls › Export data" in page
    assert "Settings › Privacy › Export data" in page
    assert "Google Takeout" in page and "Thunderbird" in page and ".mbox" in page
    assert "chatgpt-export.zip" in page and "ChatGPT export: 9 conversations and 118 messages read." in page
    assert '<span class="badge source">ChatGPT</span>' in page
    assert 'accept=".zip,.json,.jsonl,.md,.markdown,.mbox,.eml"' in page


def test_the_page_imports_a_claude_export_and_refuses_a_renamed_pdf(
    logged_in_client, user, django_capture_on_commit_callbacks
):
    conversation = claude_conversation("c-page", "Tea", [("m1", "human", "Green or black tea?", 1)])
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in_client.post(
            "/memories/data/",
            {"file": SimpleUploadedFile("conversations.json", json.dumps([conversation]).encode())},
            follow=True,
        )
    assert "Importing conversations.json" in response.content.decode()
    assert Memory.objects.filter(owner=user, content="Green or black tea?").exists()
    response = logged_in_client.post(
        "/memories/data/", {"file": SimpleUploadedFile("conversations.json", b"%PDF-1.4 ...")}, follow=True
    )
    assert "looks like a PDF" in response.content.decode()


# --- Server-side paths ------------------------------------------------------------------------------


def test_a_server_path_is_refused_while_no_folder_is_allowed(user, tmp_path, settings):
    settings.KYBERNESIS_IMPORT_ALLOWED_DIRS = []
    path = write_json(tmp_path / "conversations.json", [CHAT])
    with pytest.raises(MemoryInputError, match="turned off"):
        portability.import_job_create_from_path(owner=user, path=str(path))


def test_a_server_path_must_resolve_inside_an_allowed_folder(user, tmp_path, settings):
    allowed = tmp_path / "imports"
    allowed.mkdir()
    outside = write_json(tmp_path / "secret.json", [CHAT])
    settings.KYBERNESIS_IMPORT_ALLOWED_DIRS = [str(allowed)]
    (allowed / "link.json").symlink_to(outside)
    for path, reason in [
        (str(outside), "outside the folders"),
        (str(allowed / "link.json"), "outside the folders"),  # a link out of the folder is followed, then refused
        (str(allowed / ".." / "secret.json"), "outside the folders"),
        ("imports/conversations.json", "not an absolute path"),
        (str(allowed / "missing.json"), "does not exist"),
        ("", "absolute path"),
    ]:
        with pytest.raises(MemoryInputError, match=reason):
            portability.import_job_create_from_path(owner=user, path=path)
    assert not ImportJob.objects.exists()


def test_an_allowed_server_path_is_imported_and_left_where_it_is(
    user, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.KYBERNESIS_IMPORT_ALLOWED_DIRS = [str(tmp_path)]
    path = write_json(tmp_path / "conversations.json", [CHAT])
    with django_capture_on_commit_callbacks(execute=True):
        job = portability.import_job_create_from_path(owner=user, path=str(path))
    job.refresh_from_db()
    assert (job.status, job.kind, job.created, job.path) == ("done", "chatgpt", 2, "")
    assert path.exists()  # an upload's copy is removed at the end; the server's own file is not


def test_a_server_path_that_leaves_the_folder_before_the_worker_reads_it_is_refused(
    user, tmp_path, settings, django_capture_on_commit_callbacks
):
    allowed = tmp_path / "imports"
    allowed.mkdir()
    settings.KYBERNESIS_IMPORT_ALLOWED_DIRS = [str(allowed)]
    write_json(allowed / "conversations.json", [CHAT])
    job = portability.import_job_create_from_path(owner=user, path=str(allowed / "conversations.json"))
    settings.KYBERNESIS_IMPORT_ALLOWED_DIRS = [str(tmp_path / "elsewhere")]
    portability.import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "outside the folders" in job.error
    assert not Memory.objects.filter(owner=user).exists()


def test_the_chat_page_shows_an_imported_conversation_with_the_assistants_answers_as_answers(
    logged_in_client, user, tmp_path
):
    portability.import_path(owner=user, path=write_json(tmp_path / "conversations.json", [CHAT]))
    session = ChatSession.objects.get(owner=user)
    page = logged_in_client.get(f"/chat/?session={session.pk}").content.decode()
    assert "When do I plant garlic?" in page and "In autumn." in page
    assert "ChatGPT&#x27;s answer, imported" in page or "ChatGPT's answer, imported" in page
    assert "You, in ChatGPT, imported" in page
    assert "Noted: kept as a memory." not in page  # the conversation's own answer follows, not one made here
