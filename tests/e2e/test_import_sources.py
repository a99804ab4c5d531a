"""The Export and import page with the new sources, in the browser: a ChatGPT export uploaded through
the form is imported, its job shows what was read and what was left out, and the page fits a phone and
a desktop (no overflow, axe clean)."""

from __future__ import annotations

import json

import pytest

from memories.models import ChatSession, Memory
from tests.e2e.test_pages_everywhere import check_page, sign_in
from tests.factories import UserFactory
from tests.portability.chat_exports import chatgpt_conversation

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_chatgpt_export_uploaded_on_the_page_shows_its_report_at_both_widths(
    browser, live_server, artifacts, tmp_path
):
    user = UserFactory()
    edited = chatgpt_conversation(
        "conv-e2e",
        "Planning a week of dinners for two with leftovers for lunch",
        [
            ("q", "user", "Plan five dinners for two that leave lunch for the next day.", 1),
            ("old", "assistant", "Monday: lentil soup.", 2),
            ("new", "assistant", "Monday: a tray of roast vegetables and chickpeas; Tuesday: dal.", 3, "q"),
        ],
        current="new",
    )
    path = tmp_path / "chatgpt-export-2025-06-01-a-very-long-file-name-from-the-download.json"
    path.write_text(json.dumps([edited]), encoding="utf-8")
    problems: list[str] = []
    for width in (1280, 390):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        sign_in(page, user)
        page.goto("/memories/data/")
        assert page.locator("#source-chatgpt").inner_text().count("Settings › Data controls › Export data") == 1
        if width == 1280:
            page.set_input_files("#import-file", str(path))
            page.click("#import-submit")
            page.locator(".import-job[data-status=done]").wait_for()
        job = page.locator(".import-job").first
        assert "ChatGPT" in job.locator(".badge.source").inner_text()
        notices = job.locator(".import-notices li").all_inner_texts()
        assert notices[0] == "ChatGPT export: 1 conversation and 2 messages read."
        assert any("1 message on branches that were not current" in n for n in notices)
        problems += check_page(page, artifacts, "import-sources", width)
        page.goto(f"/chat/?session={ChatSession.objects.get(owner=user).pk}")
        answer = page.locator(".chat-message.reply.imported")
        assert (
            "a tray of roast vegetables" in answer.inner_text() and "ChatGPT's answer, imported" in answer.inner_text()
        )
        problems += check_page(page, artifacts, "imported-chat", width)
        context.close()
    assert not problems, "\n".join(problems)
    assert ChatSession.objects.get(owner=user).message_count == 2
    assert Memory.objects.filter(owner=user, source="chat").count() == 2
