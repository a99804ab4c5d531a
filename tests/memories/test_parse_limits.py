"""Bounded parsing: compressed uploads are decompressed with a byte budget while they are read, per
file and per request, whatever sizes the file declares."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bench import bombs
from memories import services
from memories.models import Memory
from memories.parsers import (
    DecompressionBombError,
    ExtractionError,
    InflateBudget,
    extract,
)
from tests.files import make_docx


def test_a_docx_bomb_with_honest_sizes_is_refused_with_413():
    data = bombs.docx_bomb(inflated_mb=30)
    with pytest.raises(DecompressionBombError, match="zip bomb") as caught:
        extract("bomb.docx", data)
    assert caught.value.status == 413


def test_a_docx_whose_headers_lie_about_its_size_is_refused_by_its_real_bytes():
    data = bombs.docx_lying_sizes(inflated_mb=30, claimed=1000)
    with pytest.raises(DecompressionBombError, match="zip bomb"):
        extract("liar.docx", data)


def test_a_docx_over_the_per_file_limit_is_refused_even_at_a_plausible_ratio():
    # A real document compresses a few times; the absolute limit still holds.
    with pytest.raises(DecompressionBombError, match="more than 1,000 bytes"):
        extract("plan.docx", make_docx(), max_inflated=1000)


def test_a_pdf_whose_stream_inflates_past_the_limit_is_refused_with_413():
    with pytest.raises(DecompressionBombError, match="stream inside this PDF") as caught:
        extract("bomb.pdf", bombs.pdf_bomb(inflated_mb=30))
    assert caught.value.status == 413


def test_a_docx_cut_short_or_corrupted_inside_is_a_clear_error():
    data = bytearray(make_docx())
    cut = bytes(data[: len(data) // 2])
    with pytest.raises(ExtractionError, match=r"\.docx"):
        extract("cut.docx", cut)


def test_the_budget_is_shared_by_the_files_of_one_request():
    data = make_docx()
    budget = InflateBudget(0)
    extract("a.docx", data, budget=InflateBudget(10**9))  # parses on its own
    with pytest.raises(DecompressionBombError, match="this upload's limit"):
        extract("b.docx", data, budget=budget)


@pytest.mark.django_db
def test_an_upload_of_many_files_stops_decompressing_at_the_request_limit(user, settings):
    one = make_docx()
    measured = InflateBudget(10**9)
    extract("one.docx", one, budget=measured)  # the parts a .docx's text is read from, inflated
    settings.KYBERNESIS_MAX_REQUEST_INFLATED_BYTES = int((10**9 - measured.remaining) * 2.5)
    files = []
    for i in range(5):
        import docx

        document = docx.Document(io.BytesIO(one))
        document.add_paragraph(f"Copy number {i}.")
        out = io.BytesIO()
        document.save(out)
        files.append(SimpleUploadedFile(f"plan-{i}.docx", out.getvalue()))

    results = services.upload_files(owner=user, files=files)

    assert [r.status for r in results][:2] == ["created", "created"]
    refused = [r for r in results if r.status == "rejected"]
    assert refused and all(r.http_status == 413 and "this upload's limit" in r.error for r in refused)
    assert Memory.objects.filter(owner=user).count() == 5 - len(refused)


@pytest.mark.django_db
def test_the_api_answers_413_for_an_upload_of_only_bombs(api):
    from django.test.client import MULTIPART_CONTENT

    response = api.post(
        "/api/v1/uploads",
        {
            "files": [
                SimpleUploadedFile("bomb.docx", bombs.docx_bomb(inflated_mb=20)),
                SimpleUploadedFile("bomb.pdf", bombs.pdf_bomb(inflated_mb=20)),
            ]
        },
        content_type=MULTIPART_CONTENT,
    )
    assert response.status_code == 413
    assert "zip bomb" in response.json()["detail"]
