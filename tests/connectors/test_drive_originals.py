"""Drive files keep their originals like uploads do; Google Docs (exported text) and Notion pages have no
file of their own, so they keep none."""

from __future__ import annotations

import hashlib

import pytest

from connectors.models import ConnectorItem
from memories import original_files
from memories.models import Original
from tests.connectors.conftest import sync
from tests.fakes.google_drive import DOC
from tests.files import make_pdf


@pytest.fixture(autouse=True)
def store_dir(settings, tmp_path):
    settings.KYBERNESIS_ORIGINALS_DIR = tmp_path / "originals"
    settings.KYBERNESIS_KEEP_ORIGINALS = True
    return settings.KYBERNESIS_ORIGINALS_DIR


def original_for(account, file) -> Original | None:
    memory = ConnectorItem.objects.get(account=account, external_id=file.id).memory
    return Original.objects.filter(memory=memory).first()


def test_a_synced_drive_file_keeps_its_original_and_a_google_doc_keeps_none(drive_account, fake_google):
    pdf_bytes = make_pdf(["Quarterly revenue grew.", "Costs stayed flat."])
    pdf = fake_google.add_file("Report.pdf", "application/pdf", pdf_bytes)
    doc = fake_google.add_file("Design notes", DOC, exports={"text/plain": b"The design is settled."})

    account = sync(drive_account)

    kept = original_for(account, pdf)
    assert (kept.name, kept.media_type, kept.size, kept.page_count) == (
        "Report.pdf",
        "application/pdf",
        len(pdf_bytes),
        2,
    )
    assert original_files.path_for(account.owner_id, kept.sha256).read_bytes() == pdf_bytes
    assert ConnectorItem.objects.get(account=account, external_id=doc.id).memory is not None
    assert original_for(account, doc) is None


def test_an_edited_drive_file_replaces_its_original_and_the_old_bytes_go(
    drive_account, fake_google, store_dir, django_capture_on_commit_callbacks
):
    file = fake_google.add_file("roadmap.txt", "text/plain", b"First version of the roadmap.")
    account = sync(drive_account)
    first = original_for(account, file)
    old_path = original_files.path_for(account.owner_id, first.sha256)

    fake_google.edit_file(file.id, content=b"Second version of the roadmap.")
    with django_capture_on_commit_callbacks(execute=True):
        sync(account)

    second = original_for(account, file)
    assert second.sha256 == hashlib.sha256(b"Second version of the roadmap.").hexdigest()
    assert not old_path.exists()
    assert Original.objects.filter(owner=account.owner).count() == 1


def test_with_keeping_off_a_drive_file_keeps_no_original(drive_account, fake_google, settings):
    settings.KYBERNESIS_KEEP_ORIGINALS = False
    file = fake_google.add_file("notes.txt", "text/plain", b"Remember the milk.")
    account = sync(drive_account)
    assert original_for(account, file) is None
