"""Languages in the browser: the memory page names a memory's language and its chunks', and the
search page's language filter keeps one language, at phone and desktop widths (no overflow, axe
clean)."""

from __future__ import annotations

import pytest

from memories import services
from tests.e2e.test_pages_everywhere import check_page, sign_in
from tests.factories import UserFactory
from tests.languages import ENGLISH, GERMAN

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_language_is_shown_and_search_filters_by_it(browser, live_server, artifacts, db):
    user = UserFactory()
    german = services.memory_create(
        owner=user, title="Server migration", content="\n\n".join([GERMAN] * 10 + [ENGLISH] * 6)
    )
    services.memory_create(owner=user, title="Move", content=ENGLISH)
    problems: list[str] = []
    for width in (390, 1280):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        sign_in(page, user)
        page.goto(f"/memories/{german.pk}/")
        language = page.locator("#memory-language")
        assert "German" in language.inner_text() and "English" in language.inner_text()
        problems += check_page(page, artifacts, "memory-language", width)
        page.goto("/search/?q=database+server&weaker=1")
        page.select_option("select[name=language]", "de")
        page.wait_for_url("**language=de**")
        page.locator("#results .search-results").wait_for()
        titles = [t.inner_text() for t in page.locator("#results a.title").all()]
        assert titles == ["Server migration"]
        problems += check_page(page, artifacts, "search-language", width)
        context.close()
    assert not problems, "\n".join(problems)
