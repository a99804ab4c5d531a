"""A person imports a zip of notes on the Export and import page, reads the report, and downloads an export."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from memories.models import Memory
from tests.e2e.conftest import sign_up

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_import_notes_read_the_report_and_download_the_export(page, artifacts, tmp_path):
    sign_up(page, "grace@example.com")
    page.click("text=Export & import")
    page.wait_for_url("**/memories/data/")

    vault = tmp_path / "vault.zip"
    with zipfile.ZipFile(vault, "w") as archive:
        archive.writestr("Harbour.md", "---\ntags: [sea]\n---\nThe harbour master logs every ship. See [[Tides]].")
        archive.writestr("Tides.md", "High tide is at six.")
        archive.writestr("old.md", "Caf\xe9".encode("latin-1"))
    page.set_input_files("#import-file", str(vault))
    page.click("#import-submit")
    page.wait_for_selector(".import-job[data-status=done]")
    job = page.locator(".import-job").first
    assert "2 created" in " ".join(job.inner_text().split())
    assert "old.md" in job.inner_text() and "not UTF-8" in job.inner_text()
    page.screenshot(path=str(artifacts / "portability.png"), full_page=True)
    assert Memory.objects.get(title="Harbour").manual_tags == ["sea"]

    with page.expect_download() as download:
        page.click("#export-button")
    data = download.value.path().read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        titles = sorted(json.loads(line)["title"] for line in archive.read("memories.jsonl").splitlines())
    assert titles == ["Harbour", "Tides"]
