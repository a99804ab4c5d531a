"""A memory's original in the browser: the page shows its name, type, size and pages at phone and
desktop widths (no overflow, axe clean), Download saves the exact bytes under the file's name, and
Open shows source code as plain text and a PDF as a PDF."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memories import services
from tests.e2e.test_pages_everywhere import check_page, sign_in
from tests.factories import UserFactory
from tests.files import make_pdf

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PY = (
    b'"""Fibonacci numbers, the slow way and the fast way."""\n\n\n'
    b"def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n\n"
    b"def fib_fast(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
)


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    file = SimpleUploadedFile(name, data)
    file.client_name = name
    return file


@pytest.fixture
def kept(db):
    user = UserFactory()
    pdf = make_pdf(
        [
            "Quarterly report. Revenue grew by a tenth in the third quarter.",
            "Costs stayed flat; the harbour project finished early.",
            "Outlook: two new hires in Lisbon next spring.",
        ]
    )
    results = services.upload_files(
        owner=user,
        files=[
            upload("Quarterly report with a rather long file name for phones 2026-Q3 final.pdf", pdf),
            upload("fib.py", PY),
        ],
    )
    assert [r.status for r in results] == ["created", "created"]
    return {"user": user, "pdf": results[0].memory, "py": results[1].memory, "pdf_bytes": pdf}


def test_the_memory_page_shows_the_original_at_both_widths(browser, live_server, artifacts, kept):
    problems: list[str] = []
    for width in (390, 1280):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        sign_in(page, kept["user"])
        for name, memory in (("memory-original-pdf", kept["pdf"]), ("memory-original-py", kept["py"])):
            page.goto(f"/memories/{memory.pk}/")
            card = page.locator(".original-card")
            card.wait_for()
            assert memory.original.name in card.inner_text()
            problems += check_page(page, artifacts, name, width)
        context.close()
    assert not problems, "\n".join(problems)


def test_download_saves_the_exact_bytes_and_open_shows_text_and_pdfs(browser, live_server, kept, tmp_path):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1280, "height": 900}, accept_downloads=True
    )
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, kept["user"])

    page.goto(f"/memories/{kept['py'].pk}/")
    card = page.locator(".original-card")
    assert "fib.py" in card.inner_text() and "text/x-python" in card.inner_text()
    with page.expect_download() as info:
        card.get_by_role("link", name="Download").click()
    download = info.value
    assert download.suggested_filename == "fib.py"
    saved = tmp_path / "fib.py"
    download.save_as(saved)
    assert saved.read_bytes() == PY

    # Open: the source as plain text in a new tab, never run or rendered.
    with context.expect_page() as opened:
        card.get_by_role("link", name="Open").click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.locator("body").inner_text().strip() == PY.decode().strip()
    tab.close()

    response = page.request.get(f"/memories/{kept['pdf'].pk}/original/")
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"].startswith("inline;")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.body() == kept["pdf_bytes"]

    # Another account sees nothing of it.
    stranger = UserFactory()
    other = browser.new_context(base_url=live_server.url)
    other_page = other.new_page()
    sign_in(other_page, stranger)
    assert other_page.request.get(f"/memories/{kept['py'].pk}/original/").status == 404
    other.close()
    context.close()
