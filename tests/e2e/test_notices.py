"""A memory's notices in the browser: the memory page shows them in a notice box that fits a phone
and a desktop (no overflow, axe clean), and the upload page shows a file's notices under its line."""

from __future__ import annotations

import pytest

from memories import services
from tests.e2e.test_pages_everywhere import check_page, sign_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NOTICES = [
    "pages 1–3: no text layer, read by OCR",
    "Dropped 245,112 characters that were not text: glyph names from a PDF (245,000), (cid:…) codes from a PDF (112).",
    "Repaired Cyrillic text that had been read with the wrong character set (Windows-1251 read as Windows-1252).",
]


def test_the_memory_page_shows_its_notices_at_both_widths(browser, live_server, artifacts, db):
    user = UserFactory()
    memory = services.memory_create(
        owner=user,
        title="Attention Is All You Need",
        content="The dominant sequence transduction models are based on complex recurrent networks.",
        metadata={"filename": "1706.03762v7-final-camera-ready-with-a-long-name.pdf", "size": 2215244},
        notices=NOTICES,
    )
    problems: list[str] = []
    for width in (390, 1280):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        sign_in(page, user)
        page.goto(f"/memories/{memory.pk}/")
        box = page.get_by_role("note", name="How the text was read")
        box.wait_for()
        assert [item.inner_text() for item in box.locator("li").all()] == NOTICES
        assert box.bounding_box()["width"] <= width
        problems += check_page(page, artifacts, "memory-notices", width)
        context.close()
    assert not problems, "\n".join(problems)
