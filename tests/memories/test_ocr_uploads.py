"""Scans and photos uploaded: queued for the task worker (never read in the request), with page progress
in the upload list and the API, cancellable, bounded, and stored as a memory that keeps its original
file and says which pages came from OCR (memories.services.ocr_uploads)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from memories import services
from memories.models import Memory, UploadJob
from memories.parsers import ocr as ocr_module
from memories.services import jobs
from tests.factories import make_memory
from tests.memories import scans

pytestmark = [pytest.mark.django_db, scans.needs_tesseract]


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    file = SimpleUploadedFile(name, data)
    file.client_name = name
    return file


def post_files(api, files):
    return Client().post("/api/v1/uploads", {"files": files}, HTTP_AUTHORIZATION=f"Bearer {api.token}")


def _words(text: str) -> str:
    return " ".join(text.split()).lower()


def test_a_scan_is_queued_not_read_in_the_request(user):
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", scans.scanned_pdf([[scans.PHRASE]] * 2))])
    assert result.status == "queued" and result.memory is None
    job = UploadJob.objects.get(pk=result.job.pk)
    assert (job.kind, job.status, job.pages_done, job.pages_total) == ("ocr", "pending", 0, 2)
    assert Path(job.path).is_file() and job.text == ""
    assert not Memory.objects.exists()


def test_the_worker_reads_the_scan_and_stores_it_with_its_original_and_page_notes(
    user, django_capture_on_commit_callbacks
):
    data = scans.mixed_pdf(["Typed cover page about anchors"], [[scans.PHRASE]])
    with django_capture_on_commit_callbacks(execute=True):
        [result] = services.upload_files(owner=user, files=[upload("mixed.pdf", data)], manual_tags=["harbour"])
    job = UploadJob.objects.get(pk=result.job.pk)
    assert job.status == "done", job.error
    assert (job.pages_done, job.pages_total) == (1, 1)
    memory = job.memory
    assert "anchors" in memory.content and scans.PHRASE.lower() in _words(memory.content)
    assert memory.metadata["pages"] == [
        {"first": 1, "last": 1, "text": "layer"},
        {"first": 2, "last": 2, "text": "ocr", "reason": "no text layer"},
    ]
    assert memory.original.name == "mixed.pdf" and memory.original.size == len(data)
    assert "harbour" in memory.manual_tags
    assert not Path(job.path or "/nonexistent").exists() and job.path == ""


def test_a_photo_upload_answers_202_and_the_job_status_shows_its_pages(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_files(api, [upload("whiteboard.jpg", scans.image_bytes([scans.PHRASE], "JPEG"))])
    assert response.status_code == 202
    [result] = response.json()["results"]
    assert result["status"] == "queued"
    status = Client().get(result["statusUrl"], HTTP_AUTHORIZATION=f"Bearer {api.token}").json()
    assert (status["kind"], status["status"], status["pagesDone"], status["pagesTotal"]) == ("ocr", "done", 1, 1)
    assert Memory.objects.get(pk=status["memory"]["id"]).original.name == "whiteboard.jpg"


def test_a_queued_scan_can_be_cancelled_and_stores_nothing(api, user):
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", scans.scanned_pdf([[scans.PHRASE]]))])
    path = Path(result.job.path)
    response = Client().post(f"/api/v1/uploads/{result.job.pk}/cancel", HTTP_AUTHORIZATION=f"Bearer {api.token}")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert services.ocr_upload_run(job_id=result.job.pk) is None
    assert not path.exists() and not Memory.objects.exists()


def test_a_scan_being_read_stops_after_the_page_it_is_on_when_cancelled(user, monkeypatch):
    [result] = services.upload_files(owner=user, files=[upload("long.pdf", scans.scanned_pdf([[scans.PHRASE]] * 3))])
    job = result.job
    read = ocr_module.recognise

    def cancel_while_reading(image, *, config):
        UploadJob.objects.filter(pk=job.pk).update(status=UploadJob.Status.CANCELLED)
        return read(image, config=config)

    monkeypatch.setattr(ocr_module, "recognise", cancel_while_reading)
    services.ocr_upload_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "cancelled" and job.pages_done == 0
    assert not Memory.objects.exists() and job.path == ""


def test_a_finished_job_cannot_be_cancelled(user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        [result] = services.upload_files(owner=user, files=[upload("note.png", scans.image_bytes([scans.PHRASE]))])
    job = services.upload_job_cancel(job=UploadJob.objects.get(pk=result.job.pk))
    assert job.status == "done" and job.memory is not None


def test_the_same_scan_twice_is_read_once(user, django_capture_on_commit_callbacks):
    data = scans.scanned_pdf([[scans.SECOND]])
    with django_capture_on_commit_callbacks(execute=True):
        first, copy = services.upload_files(owner=user, files=[upload("a.pdf", data), upload("b.pdf", data)])
    assert (first.status, copy.status) == ("queued", "duplicate") and copy.job.pk == first.job.pk
    [again] = services.upload_files(owner=user, files=[upload("c.pdf", data)])
    assert again.status == "duplicate" and again.memory.pk == UploadJob.objects.get(pk=first.job.pk).memory_id
    assert Memory.objects.count() == 1 and UploadJob.objects.count() == 1


def test_with_ocr_off_a_scan_upload_says_so(user, settings):
    settings.KYBERNESIS_OCR = False
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", scans.scanned_pdf([[scans.PHRASE]]))])
    assert result.status == "rejected" and "OCR is off on this server (KYBERNESIS_OCR=off)" in result.error
    assert not UploadJob.objects.exists()


def test_with_ocr_off_a_mixed_pdf_is_stored_with_its_text_pages_and_the_loss_recorded(user, settings):
    settings.KYBERNESIS_OCR = False
    data = scans.mixed_pdf(["Typed cover page about anchors"], [[scans.PHRASE]])
    [result] = services.upload_files(owner=user, files=[upload("mixed.pdf", data)])
    assert result.status == "created"
    assert result.memory.metadata["pages"][1] == {
        "first": 2,
        "last": 2,
        "text": "dropped",
        "reason": "no text layer",
        "why": "OCR is off on this server (KYBERNESIS_OCR=off)",
    }


def test_an_image_of_30000_by_30000_pixels_is_refused_with_a_reason(api):
    response = post_files(api, [upload("bomb.png", scans.huge_png_header())])
    assert response.status_code == 413
    assert "30,000 × 30,000 pixels" in response.json()["detail"]


def test_a_scan_whose_pages_all_fail_fails_with_the_reason(user, settings, django_capture_on_commit_callbacks):
    data = scans.scanned_pdf([[scans.PHRASE]])
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", data)])
    settings.KYBERNESIS_OCR_MAX_PIXELS = 10_000  # lowered after the upload: the worker refuses the page
    services.ocr_upload_run(job_id=result.job.pk)
    job = UploadJob.objects.get(pk=result.job.pk)
    assert job.status == "failed" and "over the limit of 10,000" in job.error
    assert "Error" not in job.error and job.path == ""


def test_the_upload_page_lists_scans_being_read_with_their_progress_and_a_cancel_button(logged_in_client, user):
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", scans.scanned_pdf([[scans.PHRASE]] * 2))])
    UploadJob.objects.filter(pk=result.job.pk).update(status=UploadJob.Status.PROCESSING, pages_done=1)
    page = logged_in_client.get("/upload/").content.decode()
    assert "scan.pdf" in page and "reading page 2 of 2" in page
    assert f"/memories/uploads/jobs/{result.job.pk}/cancel/" in page
    row = logged_in_client.post(f"/memories/uploads/jobs/{result.job.pk}/cancel/", HTTP_HX_REQUEST="true")
    assert "cancelled" in row.content.decode()
    assert UploadJob.objects.get(pk=result.job.pk).status == "cancelled"


def test_a_stalled_ocr_job_is_queued_again_as_ocr(user, django_capture_on_commit_callbacks):
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", scans.scanned_pdf([[scans.PHRASE]]))])
    UploadJob.objects.filter(pk=result.job.pk).update(
        status=UploadJob.Status.PROCESSING, updated_at=timezone.now() - timedelta(hours=2)
    )
    with django_capture_on_commit_callbacks(execute=True):
        counts = jobs.jobs_recover_stalled()
    assert counts["uploads_requeued"] == 1
    job = UploadJob.objects.get(pk=result.job.pk)
    assert job.status == "done" and scans.PHRASE.lower() in _words(job.memory.content)


def test_an_ocr_job_given_up_by_the_sweep_leaves_no_file_behind(user, settings, django_capture_on_commit_callbacks):
    settings.KYBERNESIS_JOB_MAX_RECOVERIES = 0
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", scans.scanned_pdf([[scans.PHRASE]]))])
    path = Path(result.job.path)
    UploadJob.objects.filter(pk=result.job.pk).update(
        status=UploadJob.Status.PROCESSING, updated_at=timezone.now() - timedelta(hours=2)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.jobs_recover_stalled()["failed"] == 1
    assert UploadJob.objects.get(pk=result.job.pk).status == "failed"
    assert not path.exists()


def test_a_finished_ocr_row_links_its_memory_and_shows_how_it_was_read(logged_in_client, user):
    [result] = services.upload_files(owner=user, files=[upload("scan.pdf", scans.scanned_pdf([[scans.PHRASE]]))])
    memory = make_memory(user, "Page one, read by OCR.", title="Scan", notices=["page 1: no text layer, read by OCR"])
    UploadJob.objects.filter(pk=result.job.pk).update(status=UploadJob.Status.DONE, memory=memory)
    row = logged_in_client.get(f"/memories/uploads/jobs/{result.job.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert f"/memories/{memory.pk}/" in row and ">Scan</a>" in row
    assert "page 1: no text layer, read by OCR" in row and "hx-trigger" not in row


def test_the_same_scan_again_while_its_memory_is_in_the_trash_restores_it_unread(
    user, django_capture_on_commit_callbacks
):
    data = scans.scanned_pdf([[scans.SECOND]])
    with django_capture_on_commit_callbacks(execute=True):
        [first] = services.upload_files(owner=user, files=[upload("a.pdf", data)])
    memory = Memory.objects.get(pk=UploadJob.objects.get(pk=first.job.pk).memory_id)
    services.memory_delete(memory=memory)
    [again] = services.upload_files(owner=user, files=[upload("again.pdf", data)])
    assert again.status == "duplicate" and again.memory.pk == memory.pk and again.job is None
    assert Memory.objects.filter(pk=memory.pk).exists() and UploadJob.objects.count() == 1
