"""Connector syncs and the memory side: a document's own title, a title the person chose that no sync
replaces, the notices of the reading, and normalised text that is seen as unchanged."""

from __future__ import annotations

import pytest

from connectors.models import ConnectorItem
from connectors.providers import google_drive
from memories.models import Memory
from memories.services import memory_update
from tests.connectors.conftest import sync
from tests.fakes.notion import block


def memory_for(account, external_id) -> Memory:
    return ConnectorItem.objects.get(account=account, external_id=external_id).memory


@pytest.fixture
def declared(monkeypatch):
    """Drive files parse with the title and notices given here (Extracted.title and .notices)."""
    given = {"title": None, "notices": []}
    real = google_drive.extract

    def extract(name, data, **kwargs):
        extracted = real(name, data, **kwargs)
        extracted.title, extracted.notices = given["title"], list(given["notices"])
        return extracted

    monkeypatch.setattr(google_drive, "extract", extract)
    return given


def test_a_synced_file_is_titled_after_its_document_when_it_declares_a_title(drive_account, fake_google, declared):
    declared["title"], declared["notices"] = "Quarterly Report", ["page 2: text could not be decoded"]
    file = fake_google.add_file("bug59058.txt", "text/plain", b"Revenue grew.")

    account = sync(drive_account)

    memory = memory_for(account, file.id)
    assert memory.title == "Quarterly Report"
    assert memory.notices == ["page 2: text could not be decoded"]
    assert ConnectorItem.objects.get(external_id=file.id).title == "bug59058.txt"
    assert memory.metadata["filename"] == "bug59058.txt"


def test_a_sync_after_the_person_edited_the_title_keeps_the_person_s_title(drive_account, fake_google, declared):
    file = fake_google.add_file("notes.txt", "text/plain", b"First version.")
    account = sync(drive_account)
    memory_update(memory=memory_for(account, file.id), title="My own title")

    fake_google.edit_file(file.id, content=b"Second version.", name="renamed.txt")
    declared["title"] = "A title inside the document"
    sync(account)

    memory = memory_for(account, file.id)
    assert memory.content == "Second version."
    assert memory.title == "My own title"


def rename_only(fake, file_id: str, name: str) -> None:
    """A rename that leaves the file's modified time as it was: the sync changes only the title."""
    with fake.lock:
        drive = fake.drive()
        drive.files[file_id].name = name
        fake._log(drive, file_id)


def test_a_rename_alone_keeps_the_person_s_title_too(drive_account, fake_google):
    file = fake_google.add_file("notes.txt", "text/plain", b"Text.")
    account = sync(drive_account)
    memory_update(memory=memory_for(account, file.id), title="Mine")

    rename_only(fake_google, file.id, "renamed.txt")
    sync(account)

    assert ConnectorItem.objects.get(external_id=file.id).title == "renamed.txt"
    assert memory_for(account, file.id).title == "Mine"


def test_a_rename_alone_is_followed_when_the_title_was_the_file_name(drive_account, fake_google):
    file = fake_google.add_file("draft.txt", "text/plain", b"Text that stays.")
    account = sync(drive_account)

    rename_only(fake_google, file.id, "final.txt")
    sync(account)

    memory = memory_for(account, file.id)
    assert memory.title == "final.txt" and memory.edited_at is None and memory.title_edited_at is None


def test_a_rename_alone_keeps_the_document_s_own_title(drive_account, fake_google, declared):
    declared["title"] = "Quarterly Report"
    file = fake_google.add_file("q3.txt", "text/plain", b"Revenue grew.")
    account = sync(drive_account)

    rename_only(fake_google, file.id, "q3-final.txt")
    sync(account)

    assert memory_for(account, file.id).title == "Quarterly Report"


def test_a_rename_with_new_content_follows_when_the_title_was_the_file_name(drive_account, fake_google):
    file = fake_google.add_file("draft.txt", "text/plain", b"Text.")
    account = sync(drive_account)

    fake_google.edit_file(file.id, name="final.txt", content=b"New text.")
    sync(account)

    assert memory_for(account, file.id).title == "final.txt"


def test_a_sync_that_changes_the_content_is_not_a_person_s_edit(drive_account, fake_google):
    file = fake_google.add_file("a.txt", "text/plain", b"One.")
    account = sync(drive_account)
    fake_google.edit_file(file.id, content=b"Two.")
    sync(account)
    memory = memory_for(account, file.id)
    assert memory.content == "Two." and memory.edited_at is None


def test_text_that_normalises_to_what_is_stored_changes_nothing(drive_account, fake_google):
    file = fake_google.add_file("a.txt", "text/plain", "The ﬁrst   ﬂoor.".encode())
    account = sync(drive_account)
    memory = memory_for(account, file.id)
    assert memory.content == "The first floor."
    chunks = list(memory.chunks.values_list("pk", flat=True))

    fake_google.edit_file(file.id, content="The ﬁrst   ﬂoor.".encode())  # touched, same bytes
    sync(account)

    again = Memory.objects.get(pk=memory.pk)
    assert list(again.chunks.values_list("pk", flat=True)) == chunks, "nothing was chunked or embedded again"
    assert ConnectorItem.objects.get(external_id=file.id).content_hash == again.content_hash


def test_new_content_from_a_sync_brings_its_own_notices(drive_account, fake_google, declared):
    declared["notices"] = ["pages 1–3: no text layer"]
    file = fake_google.add_file("scan.txt", "text/plain", b"Page four.")
    account = sync(drive_account)
    assert memory_for(account, file.id).notices == ["pages 1–3: no text layer"]

    declared["notices"] = []
    fake_google.edit_file(file.id, content=b"Every page typed out.")
    sync(account)

    assert memory_for(account, file.id).notices == []


def test_a_notion_page_with_blocks_left_out_says_so_on_its_memory(notion_account, fake_notion):
    page = fake_notion.add_page("Mixed", [block("paragraph", "Known text."), block("hologram", None, spin=3)])

    account = sync(notion_account)

    assert memory_for(account, page["id"]).notices == ["1 block of a type Kybernesis cannot read (hologram) left out"]
