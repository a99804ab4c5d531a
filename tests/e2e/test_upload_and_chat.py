"""A person signs up, drops two files on the upload zone, opens one, and chats."""

from __future__ import annotations

import base64

import pytest

from memories.models import Memory
from tests.e2e.conftest import sign_up
from tests.files import make_pdf

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DROP_FILES = """
async ([zoneSelector, files]) => {
  const transfer = new DataTransfer();
  for (const f of files) {
    const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
    transfer.items.add(new File([bytes], f.name, { type: f.type }));
  }
  const zone = document.querySelector(zoneSelector);
  for (const type of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer }));
  }
}
"""


def as_drop(name: str, data: bytes, mime: str) -> dict:
    return {"name": name, "type": mime, "b64": base64.b64encode(data).decode()}


def test_sign_up_drop_two_files_open_one_and_chat(page, artifacts):
    page.goto("/")
    assert "self-hosted memory" in page.locator("main").inner_text()
    page.click("main >> text=Create an account")
    page.wait_for_url("**/accounts/signup/")
    sign_up(page, "ada@example.com")

    page.goto("/upload/")
    markdown = ("# Field notes\n\n" + "Alice met the Product Team in San Francisco to plan the launch. " * 40).encode()
    pdf = make_pdf(["Quarterly revenue grew in every region.", "Costs fell after the migration."])
    page.evaluate(
        DROP_FILES,
        [
            "#dropzone",
            [as_drop("field-notes.md", markdown, "text/markdown"), as_drop("revenue.pdf", pdf, "application/pdf")],
        ],
    )
    page.locator(".upload-row.status-created").nth(1).wait_for()
    assert page.locator(".upload-row.status-created").count() == 2
    page.screenshot(path=str(artifacts / "upload-after-drop.png"), full_page=True)

    page.locator(".upload-row.status-created a", has_text="Field notes").click()
    page.wait_for_url("**/memories/*/")
    assert page.locator("section.chunk").count() >= 2
    assert "Field notes" in page.locator("section.chunk").first.inner_text()

    page.goto("/chat/")
    page.fill("textarea[name=content]", "What did Alice plan with the Product Team?")
    page.click(".chat-form button[type=submit]")
    page.locator(".chat-message.reply").first.wait_for()
    reply = page.locator(".chat-message.reply").first.inner_text()
    assert "Field notes" in reply and "revenue" not in reply
    assert page.locator(".chat-sessions li.current").count() == 1
    page.screenshot(path=str(artifacts / "chat-after-message.png"), full_page=True)

    page.goto("/memories/")
    assert page.locator(".memory-list li", has_text="What did Alice plan with the Product Team?").count() == 1
    assert Memory.objects.filter(source="chat").count() == 1
