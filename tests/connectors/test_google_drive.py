"""Google Drive sync against the fake Drive v3 server: listings, exports, incremental changes, resilience."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from allauth.socialaccount.models import SocialToken
from django.utils import timezone

from connectors.models import ConnectorAccount, ConnectorItem
from memories import embedding
from memories.models import Memory, Source, Tier
from memories.services import memory_update
from tests.connectors.conftest import connect_google, sync
from tests.fakes.base import Response
from tests.fakes.google_drive import DOC, FOLDER, SHEET, SLIDES, drive_error
from tests.files import make_docx, make_pdf

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
Status = ConnectorItem.Status


def memory_for(account, file) -> Memory:
    return ConnectorItem.objects.get(account=account, external_id=file.id).memory


@pytest.fixture
def embed_calls(monkeypatch) -> list[int]:
    """How many texts each call to the embedding model was given."""
    calls: list[int] = []
    real = embedding.embed_texts

    def counting(texts):
        calls.append(len(texts))
        return real(texts)

    monkeypatch.setattr(embedding, "embed_texts", counting)
    return calls


def test_a_first_sync_lists_every_page_of_files_and_stores_each_as_a_connector_memory(drive_account, fake_google):
    fake_google.page_size_cap = 2
    files = [
        fake_google.add_file(f"Note {i}.txt", "text/plain", f"Note number {i} about the harbour.".encode())
        for i in range(5)
    ]

    account = sync(drive_account)

    assert account.status == ConnectorAccount.Status.SYNCED
    assert len(fake_google.calls("/drive/v3/files", method="GET")) >= 3  # three listing pages
    assert account.synced_count == 5
    for file in files:
        memory = memory_for(account, file)
        assert memory.owner == account.owner and memory.source == Source.CONNECTOR
        assert memory.title == file.name
        assert memory.metadata["provider"] == "google-drive"
        assert memory.metadata["externalId"] == file.id
        assert memory.metadata["url"] == f"https://drive.google.com/file/d/{file.id}/view"
        assert datetime.fromisoformat(memory.metadata["remoteModifiedAt"]) == datetime.fromisoformat(file.modifiedTime)
        assert "google-drive" in memory.tags and "connector" in memory.tags
    # The cursor is the changes token taken before the listing; the listing's resume point is cleared.
    assert account.cursor and account.sync_state == {}


def test_the_listing_asks_only_for_the_fields_it_needs_and_leaves_out_trashed_files(drive_account, fake_google):
    fake_google.add_file("kept.txt", "text/plain", b"kept")
    trashed = fake_google.add_file("binned.txt", "text/plain", b"binned")
    fake_google.trash_file(trashed.id)

    sync(drive_account)

    listing = fake_google.calls("/drive/v3/files", method="GET")[0]
    assert "trashed = false" in listing.query["q"]
    assert listing.query["fields"].startswith("nextPageToken,files(")
    assert not ConnectorItem.objects.filter(external_id=trashed.id).exists()


def test_google_docs_sheets_and_slides_are_exported_as_text_csv_and_text(drive_account, fake_google):
    doc = fake_google.add_file("Plan", DOC, exports={"text/plain": b"The plan is to ship in May."})
    sheet = fake_google.add_file("Budget", SHEET, exports={"text/csv": b"item,cost\nservers,1200\n"})
    slides = fake_google.add_file("Pitch", SLIDES, exports={"text/plain": b"Slide one: the problem"})

    account = sync(drive_account)

    assert memory_for(account, doc).content == "The plan is to ship in May."
    assert memory_for(account, sheet).content == "item | cost\nservers | 1200"  # a sheet's rows, readable
    assert memory_for(account, slides).content == "Slide one: the problem"
    exported = {r.path.split("/")[4]: r.query["mimeType"] for r in fake_google.calls("/export")}
    assert exported == {doc.id: "text/plain", sheet.id: "text/csv", slides.id: "text/plain"}


def test_pdf_docx_and_text_files_are_downloaded_and_go_through_extraction(drive_account, fake_google):
    pdf = fake_google.add_file("Report.pdf", "application/pdf", make_pdf(["Quarterly revenue grew."]))
    docx = fake_google.add_file("Plan", DOCX, make_docx())  # no extension in the Drive name
    text = fake_google.add_file("notes", "text/markdown", b"# Notes\n\nRemember the milk.")

    account = sync(drive_account)

    assert "Quarterly revenue grew." in memory_for(account, pdf).content
    assert memory_for(account, pdf).metadata["pageCount"] == 1
    assert "pdf" in memory_for(account, pdf).tags
    assert "Engineering will focus on reliability" in memory_for(account, docx).content
    assert memory_for(account, text).content == "# Notes\n\nRemember the milk."
    assert all(r.query.get("alt") == "media" for r in fake_google.calls("/drive/v3/files/") if r.query.get("alt"))


def test_unsupported_types_are_skipped_with_a_reason_and_folders_are_ignored(drive_account, fake_google):
    image = fake_google.add_file("holiday.png", "image/png", b"\x89PNG\r\n")
    form = fake_google.add_file("Survey", "application/vnd.google-apps.form")
    fake_google.add_file("Projects", FOLDER)

    account = sync(drive_account)

    skipped = {i.external_id: i for i in ConnectorItem.objects.filter(account=account, status=Status.SKIPPED)}
    assert set(skipped) == {image.id, form.id}
    assert "image/png files are not synced" in skipped[image.id].error
    assert account.skipped_count == 2 and account.synced_count == 0
    assert not Memory.objects.exists()


def test_an_incremental_sync_applies_edits_additions_and_deletions(drive_account, fake_google):
    edited = fake_google.add_file("edited.txt", "text/plain", b"First version of the roadmap.")
    deleted = fake_google.add_file("deleted.txt", "text/plain", b"A file that will be deleted.")
    trashed = fake_google.add_file("trashed.txt", "text/plain", b"A file that will be trashed.")
    account = sync(drive_account)
    edited_memory = memory_for(account, edited)
    memory_update(memory=edited_memory, manual_tags=["roadmap"])

    fake_google.edit_file(edited.id, content=b"Second version of the roadmap.", name="roadmap.txt")
    added = fake_google.add_file("added.txt", "text/plain", b"A brand new file.")
    fake_google.delete_file(deleted.id)
    fake_google.trash_file(trashed.id)
    account = sync(account)

    assert fake_google.calls("/drive/v3/changes", method="GET")
    updated = Memory.objects.get(pk=edited_memory.pk)  # the same memory, updated in place
    assert updated.content == "Second version of the roadmap." and updated.title == "roadmap.txt"
    assert updated.manual_tags == ["roadmap"] and "roadmap" in updated.tags
    assert memory_for(account, added).content == "A brand new file."
    for gone in (deleted, trashed):
        item = ConnectorItem.objects.get(account=account, external_id=gone.id)
        assert item.status == Status.REMOVED
        assert item.memory.tier == Tier.ARCHIVE
        assert set(item.memory.chunks.values_list("tier", flat=True)) == {Tier.ARCHIVE}
        assert "deleted or trashed in Google Drive" in item.memory.metadata["archivedReason"]
    assert account.removed_count == 2 and account.synced_count == 2


def test_an_edit_re_embeds_only_the_changed_text(drive_account, fake_google, settings, embed_calls):
    settings.KYBERNESIS_CHUNK_SIZE, settings.KYBERNESIS_CHUNK_OVERLAP = 200, 20
    paragraphs = [
        f"Paragraph {i} talks about topic {i} in enough words to fill a chunk of its own here." for i in range(4)
    ]
    file = fake_google.add_file("long.txt", "text/plain", "\n\n".join(paragraphs).encode())
    account = sync(drive_account)
    first_chunks = memory_for(account, file).chunks.count()
    embed_calls.clear()

    paragraphs[-1] = "The last paragraph was rewritten entirely with different words than before it."
    fake_google.edit_file(file.id, content="\n\n".join(paragraphs).encode())
    sync(account)

    assert first_chunks > 1
    assert sum(embed_calls) < first_chunks


def test_a_second_sync_right_after_the_first_creates_and_changes_nothing(drive_account, fake_google, embed_calls):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    fake_google.add_file("b.pdf", "application/pdf", make_pdf(["Beta"]))
    fake_google.add_file("c.png", "image/png", b"\x89PNG")
    account = sync(drive_account)
    before = {m.pk: m.updated_at for m in Memory.objects.all()}
    items_before = {i.pk: i.updated_at for i in ConnectorItem.objects.all()}
    embed_calls.clear()
    downloads = len(fake_google.calls("/drive/v3/files/"))

    account = sync(account)

    assert {m.pk: m.updated_at for m in Memory.objects.all()} == before
    assert {i.pk: i.updated_at for i in ConnectorItem.objects.all()} == items_before
    assert embed_calls == []
    assert len(fake_google.calls("/drive/v3/files/")) == downloads
    assert account.status == ConnectorAccount.Status.SYNCED


def test_an_unchanged_file_listed_again_is_not_downloaded_or_embedded(drive_account, fake_google, embed_calls):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    account = sync(drive_account)
    ConnectorAccount.objects.filter(pk=account.pk).update(cursor="", sync_state={})  # force a full listing
    embed_calls.clear()

    sync(account)

    assert embed_calls == []
    assert len([r for r in fake_google.calls("/drive/v3/files/") if r.query.get("alt") == "media"]) == 1
    assert Memory.objects.count() == 1


def test_a_429_is_retried_after_the_wait_given_in_retry_after(drive_account, fake_google, waits):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    fake_google.script(
        "/drive/v3/files", drive_error(429, "Rate Limit Exceeded", "rateLimitExceeded", headers={"Retry-After": "7"})
    )

    account = sync(drive_account)

    assert waits == [7.0]
    assert account.status == ConnectorAccount.Status.SYNCED and account.synced_count == 1


def test_a_drive_403_rate_limit_is_retried_like_a_429(drive_account, fake_google, waits):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    fake_google.script("/drive/v3/files", drive_error(403, "User Rate Limit Exceeded", "userRateLimitExceeded"))

    account = sync(drive_account)

    assert len(waits) == 1 and account.synced_count == 1


def test_a_500_followed_by_success_is_retried_with_exponential_backoff(drive_account, fake_google, waits, settings):
    settings.KYBERNESIS_CONNECTOR_BACKOFF_SECONDS = 0.5
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    fake_google.script("/drive/v3/changes/startPageToken", drive_error(500, "Internal Error", "internalError"), times=2)

    account = sync(drive_account)

    assert account.status == ConnectorAccount.Status.SYNCED
    assert len(waits) == 2
    assert 0.5 <= waits[0] <= 0.5 * 1.25 and 1.0 <= waits[1] <= 1.0 * 1.25


def test_retries_stop_at_the_limit_and_the_sync_reports_the_error(drive_account, fake_google, waits, settings):
    settings.KYBERNESIS_CONNECTOR_MAX_RETRIES = 3
    fake_google.script("/drive/v3/changes/startPageToken", drive_error(503, "Backend Error", "backendError"), times=10)

    account = sync(drive_account)

    assert len(waits) == 3
    assert account.status == ConnectorAccount.Status.ERROR
    assert "503" in account.last_error and "gave up after 4 attempts" in account.last_error


def test_a_retry_after_longer_than_a_sync_waits_ends_the_sync_without_sleeping(drive_account, fake_google, waits):
    fake_google.script(
        "/drive/v3/changes/startPageToken",
        drive_error(429, "Rate Limit Exceeded", "rateLimitExceeded", headers={"Retry-After": "3600"}),
    )

    account = sync(drive_account)

    assert waits == []
    assert account.status == ConnectorAccount.Status.ERROR and "wait 3600 s" in account.last_error


def test_the_cursor_advances_only_after_a_page_is_stored_and_a_failed_sync_resumes(
    drive_account, fake_google, settings
):
    settings.KYBERNESIS_CONNECTOR_MAX_RETRIES = 0
    fake_google.page_size_cap = 2
    for i in range(5):
        fake_google.add_file(f"{i}.txt", "text/plain", f"File {i}".encode())
    listings = []
    real_route = fake_google.route

    def second_listing_page_fails_once(request):
        if request.path == "/drive/v3/files":
            listings.append(request.query.get("pageToken"))
            if len(listings) == 2:
                return drive_error(500, "Internal Error", "internalError")
        return real_route(request)

    fake_google.route = second_listing_page_fails_once
    account = sync(drive_account)

    assert account.status == ConnectorAccount.Status.ERROR
    assert account.cursor == ""  # the incremental cursor is set only once the whole listing is stored
    assert account.sync_state["listPageToken"] == "2"
    assert Memory.objects.count() == 2

    account = sync(account)

    assert listings == [None, "2", "2", "4"]  # resumed at the page that failed
    assert account.status == ConnectorAccount.Status.SYNCED
    assert Memory.objects.count() == 5 and account.cursor and account.sync_state == {}


def test_an_expired_access_token_is_refreshed_with_the_refresh_token(user, fake_google):
    account = connect_google(user, fake_google)
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    fake_google.expire_access_tokens()  # Google says 401 although our expiry time is still ahead

    account = sync(account)

    assert account.status == ConnectorAccount.Status.SYNCED and account.synced_count == 1
    refresh = [r for r in fake_google.calls("/token") if r.form().get("grant_type") == "refresh_token"]
    assert len(refresh) == 1
    token = SocialToken.objects.get(account=account.social_account)
    assert token.token in fake_google.access_tokens and token.expires_at > timezone.now()


def test_a_token_past_its_expiry_time_is_refreshed_before_the_first_request(user, fake_google):
    account = connect_google(user, fake_google)
    SocialToken.objects.filter(account=account.social_account).update(expires_at=timezone.now() - timedelta(minutes=5))

    account = sync(account)

    assert account.status == ConnectorAccount.Status.SYNCED
    assert fake_google.requests[0].path == "/token"  # refreshed before Drive ever saw the stale token
    assert fake_google.requests[0].form()["grant_type"] == "refresh_token"


def test_a_revoked_token_sets_reconnect_needed_and_is_not_retried(drive_account, fake_google, waits):
    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    fake_google.revoke_everything()

    account = sync(drive_account)

    assert account.status == ConnectorAccount.Status.RECONNECT
    assert "Reconnect" in account.last_error
    assert waits == []
    calls = len(fake_google.requests)
    assert sync(account).status == ConnectorAccount.Status.RECONNECT  # the next run does not even start
    assert len(fake_google.requests) == calls


def test_one_users_connector_never_syncs_into_another_users_memories(user, other_user, fake_google):
    mine = connect_google(user, fake_google, "alice")
    theirs = connect_google(other_user, fake_google, "bob")
    fake_google.add_file("alice.txt", "text/plain", b"Alice's secret recipe", who="alice")
    fake_google.add_file("bob.txt", "text/plain", b"Bob's travel plans", who="bob")

    sync(mine)
    sync(theirs)

    assert list(Memory.objects.for_user(user).values_list("content", flat=True)) == ["Alice's secret recipe"]
    assert list(Memory.objects.for_user(other_user).values_list("content", flat=True)) == ["Bob's travel plans"]
    assert set(ConnectorItem.objects.for_user(user).values_list("account", flat=True)) == {mine.pk}


# --- Bad input: recorded on the item, never a crash ------------------------------------------------


def test_a_file_over_the_upload_size_limit_is_skipped_without_downloading_it(drive_account, fake_google, settings):
    settings.KYBERNESIS_MAX_UPLOAD_BYTES = 1024
    big = fake_google.add_file("big.txt", "text/plain", b"x" * 10, declared_size=50 * 1024 * 1024)
    lying = fake_google.add_file("lying.txt", "text/plain", b"y" * 5000, declared_size=10)
    fake_google.add_file("small.txt", "text/plain", b"small")

    account = sync(drive_account)

    big_item = ConnectorItem.objects.get(external_id=big.id)
    assert big_item.status == Status.SKIPPED and big_item.error == "the file is 50.0 MB; the limit is 1 KB"
    assert not [r for r in fake_google.calls(f"/files/{big.id}") if r.query.get("alt") == "media"]
    lying_item = ConnectorItem.objects.get(external_id=lying.id)
    assert lying_item.status == Status.SKIPPED and "the limit is 1 KB" in lying_item.error
    assert account.synced_count == 1


def test_a_corrupt_pdf_fails_with_its_reason_and_the_other_files_still_sync(drive_account, fake_google):
    corrupt = fake_google.add_file("broken.pdf", "application/pdf", make_pdf(["Some text"])[:120])
    fake_google.add_file("fine.txt", "text/plain", b"Fine")

    account = sync(drive_account)

    item = ConnectorItem.objects.get(external_id=corrupt.id)
    assert item.status == Status.FAILED and "damaged or truncated" in item.error
    assert item.remote_modified_at is not None  # a damaged file is not fetched again until it changes
    assert account.status == ConnectorAccount.Status.SYNCED and account.synced_count == 1


def test_non_utf8_text_is_decoded_and_binary_bytes_fail_with_a_reason(drive_account, fake_google):
    latin = fake_google.add_file(
        "café.txt", "text/plain", "Crème brûlée for the café menu, naïve façade.".encode("cp1252")
    )
    binary = fake_google.add_file("blob.txt", "text/plain", bytes(range(256)) * 40)

    sync(drive_account)

    assert "Crème brûlée" in memory_for(drive_account, latin).content
    item = ConnectorItem.objects.get(external_id=binary.id)
    assert item.status == Status.FAILED and "not text: it looks like binary data" in item.error


def test_a_malformed_file_entry_is_recorded_and_the_rest_of_the_page_syncs(drive_account, fake_google):
    fake_google.add_file("fine.txt", "text/plain", b"Fine")
    original_route = fake_google.route

    def route(request):
        response = original_route(request)
        if request.path == "/drive/v3/files":
            import json

            body = json.loads(response.body)
            body["files"].append({"id": "broken1", "name": "Broken", "modifiedTime": 12})  # no mimeType, bad time
            body["files"].append({"name": "no id at all"})
            return Response.json(body)
        return response

    fake_google.route = route
    account = sync(drive_account)

    item = ConnectorItem.objects.get(external_id="broken1")
    assert item.status == Status.FAILED and "malformed file entry" in item.error and "mimeType" in item.error
    assert account.synced_count == 1 and account.status == ConnectorAccount.Status.SYNCED
    assert "without an id" in account.last_error


def test_a_response_that_is_not_json_fails_the_sync_with_a_clear_error(drive_account, fake_google):
    fake_google.script(
        "/drive/v3/files", Response(200, b"<html>Service Unavailable</html>", {"Content-Type": "text/html"})
    )

    account = sync(drive_account)

    assert account.status == ConnectorAccount.Status.ERROR
    assert account.last_error == "Google Drive sent a response that is not valid JSON"


def test_a_listing_with_the_wrong_types_fails_the_sync_with_the_field_named(drive_account, fake_google):
    fake_google.script("/drive/v3/files", Response.json({"files": "not a list"}))

    account = sync(drive_account)

    assert account.status == ConnectorAccount.Status.ERROR
    assert "malformed files.list response" in account.last_error and "files" in account.last_error


def test_a_download_that_keeps_failing_is_retried_on_the_next_sync(drive_account, fake_google, settings):
    settings.KYBERNESIS_CONNECTOR_MAX_RETRIES = 1
    file = fake_google.add_file("flaky.txt", "text/plain", b"Eventually fine")
    fake_google.script(f"/drive/v3/files/{file.id}", drive_error(503, "Backend Error", "backendError"), times=2)

    account = sync(drive_account)
    item = ConnectorItem.objects.get(external_id=file.id)
    assert item.status == Status.FAILED and "gave up" in item.error and item.remote_modified_at is None

    account = sync(account)

    item.refresh_from_db()
    assert item.status == Status.SYNCED and item.memory.content == "Eventually fine"
