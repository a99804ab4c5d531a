"""Every page at phone (390 px) and desktop (1280 px) widths: no horizontal overflow, no serious or
critical axe-core violations, and a screenshot of each in test-artifacts/pages/."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from connectors.models import ConnectorAccount
from core.tokens import api_token_create, api_token_revoke
from graph.models import Entity
from graph.services import graph_extract_memories, memory_links_refresh
from memories.services import chat_message_send, memory_delete
from sleep.models import SleepRun
from sleep.pipeline import sleep_run_request
from tests.factories import UserFactory, make_memory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
AXE = Path(__file__).resolve().parents[2] / "static" / "vendor" / "axe-core" / "axe-4.14.1.min.js"
WIDTHS = (390, 1280)
# Desktop views of these pages are also saved at window size in test-artifacts/readme/ (the README's
# screenshots in docs/screenshots/ are copies of them).
README_SHOTS = {"memories": "memory-list", "memory": "memory-page", "search": "search", "graph": "graph"}

RUN_AXE = """
async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                   nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + " :: " + n.failureSummary) }));
}
"""
OVERFLOW = """
() => {
  const width = window.innerWidth;
  const wide = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.right > width + 1 && box.width > 0 && getComputedStyle(el).position !== "fixed") {
      wide.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${[...el.classList].join(".")} right=${Math.round(box.right)}`);
    }
  }
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth: width, wide: wide.slice(0, 8) };
}
"""


def sign_in(page, user):
    page.goto("/accounts/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/memories/")


def check_page(page, artifacts: Path, name: str, width: int) -> list[str]:
    """Overflow and axe problems of the page that is open, as readable lines; saves a screenshot."""
    problems = []
    page.wait_for_load_state("networkidle")
    if page.locator("#cy").count():
        page.wait_for_selector("#cy[data-ready=true]")
    size = page.evaluate(OVERFLOW)
    if size["scrollWidth"] > size["innerWidth"]:
        problems.append(
            f"{name} @ {width}px: scrollWidth {size['scrollWidth']} > innerWidth {size['innerWidth']} "
            f"(widest: {size['wide']})"
        )
    # From the site itself, as a page script would be: the Content-Security-Policy allows no inline script.
    page.add_script_tag(url=f"/static/vendor/axe-core/{AXE.name}")
    for violation in page.evaluate(RUN_AXE):
        problems.append(
            f"{name} @ {width}px: axe {violation['impact']} {violation['id']} ({violation['help']}): "
            f"{violation['nodes']}"
        )
    folder = artifacts / "pages"
    folder.mkdir(exist_ok=True)
    page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=True, timeout=90_000)
    return problems


@pytest.fixture
def seeded(db):
    user = UserFactory()
    notes = [
        make_memory(user, text, title=title, manual_tags=tags)
        for title, text, tags in (
            (
                "Product team offsite",
                (
                    "Alice works with the Product Team, which is based in San Francisco. "
                    "The offsite is planned for March."
                ),
                ["team", "planning"],
            ),
            ("Roadmap review", "Alice presented the roadmap. The Product Team uses Django and PostgreSQL.", ["team"]),
            ("Design hire", "Bob joined the Design Team in Berlin.", ["design"]),
        )
    ]
    # "Minutes of meeting N", not "Section N.": spaCy takes every "Section N" for a work, and sixty of
    # them would bury the README's graph screenshot under a block of identical nodes.
    long_text = "\n\n".join(
        f"Minutes of meeting {i}: the archive keeps the notes about the budget "
        f"of project Atlas, which Carol leads from Lisbon. " * 6
        for i in range(60)
    )
    long_memory = make_memory(user, long_text, title="Meeting minutes archive", manual_tags=["minutes"])
    # One unbroken word longer than a desktop is wide (a pasted URL), in a title, a result and a chat
    # message: each must wrap rather than make its page wider than the window.
    url = "https://example.com/product-team/" + "a" * 300
    long_word = make_memory(user, f"The product team's long link: {url}", title=f"Product team link {url}")
    # The trash: an ordinary note and one whose unbroken title must wrap there too.
    for title in ("Old packing list for the offsite", f"Trashed link {url}"):
        memory_delete(memory=make_memory(user, f"{title}: bring the projector and the badges.", title=title))
    graph_extract_memories(memory_ids=[m.pk for m in [*notes, long_memory]])
    memory_links_refresh(owner=user)
    session, _ = chat_message_send(owner=user, content="Where is the Product Team based?")
    chat_message_send(owner=user, content=f"Read {url} before the offsite.", session=session)
    account = ConnectorAccount.objects.create(
        owner=user, provider="notion", label="Team wiki", status=ConnectorAccount.Status.SYNCED
    )
    run, _ = sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
    entity = Entity.objects.filter(owner=user).order_by("-salience").first()
    # Tokens in each state, one with a name as long as a name may be, for the API tokens page.
    api_token_create(user=user, name="research agent", scopes=["read"], expires_at=timezone.now() + timedelta(days=30))
    api_token_create(user=user, name="laptop sync " + "x" * 88)
    api_token_revoke(token=api_token_create(user=user, name="old script", scopes=["write"])[0])
    token = api_token_create(user=user, name="to revoke")[0]
    return {
        "user": user,
        "memory": notes[0],
        "long": long_memory,
        "long_word": long_word,
        "session": session,
        "account": account,
        "run": run,
        "entity": entity,
        "token": token,
    }


def test_every_page_fits_a_phone_and_a_desktop_and_passes_axe(browser, live_server, artifacts, seeded):
    user = seeded["user"]
    long_memory = seeded["long"]
    last_chunk = long_memory.chunks.count() - 1
    signed_in = {
        "memories": "/memories/",
        "memories-sorted": "/memories/?sort=title",
        "memory": f"/memories/{seeded['memory'].pk}/",
        "memory-long-chunk": f"/memories/{long_memory.pk}/?chunk={last_chunk}#chunk-{last_chunk}",
        "memory-edit": f"/memories/{seeded['memory'].pk}/edit/",
        "memory-edit-long-word": f"/memories/{seeded['long_word'].pk}/edit/",
        "add-memory": "/memories/new/",
        "tags": "/memories/tags/",
        "trash": "/memories/trash/",
        "upload": "/upload/",
        "chat": f"/chat/?session={seeded['session'].pk}",
        "search": "/search/?q=product+team",
        "graph": "/graph/",
        "graph-memories": "/graph/?view=memories",
        "entity": f"/graph/entities/{seeded['entity'].pk}/",
        "connectors": "/connectors/",
        "connector": f"/connectors/{seeded['account'].pk}/",
        "sleep": "/sleep/",
        "sleep-run": f"/sleep/{seeded['run'].pk}/",
        "api-docs": "/api/v1/docs",
        "export-import": "/memories/data/",
        "account-email": "/accounts/email/",
        "password-change": "/accounts/password/change/",
        "api-tokens": "/accounts/tokens/",
        "api-token-revoke": f"/accounts/tokens/{seeded['token'].pk}/revoke/",
        "not-found": "/no/such/page/",
    }
    signed_out = {
        "landing": "/",
        "sign-in": "/accounts/login/",
        "sign-up": "/accounts/signup/",
        "password-reset": "/accounts/password/reset/",
        "not-found-signed-out": "/nothing-here/",
    }
    problems: list[str] = []
    for width in WIDTHS:
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        for name, url in signed_out.items():
            page.goto(url)
            problems += check_page(page, artifacts, name, width)
        sign_in(page, user)
        for name, url in signed_in.items():
            page.goto(url)
            if name == "api-docs":
                page.locator(".opblock").first.wait_for()
            problems += check_page(page, artifacts, name, width)
            if width == 1280 and name in README_SHOTS:
                if name == "graph":  # open a node's side panel from the keyboard-reachable node list
                    if not page.locator("#graph-list[open]").count():
                        page.click("#graph-list summary")
                    page.locator("#graph-list a", has_text="Alice").first.click()
                    page.locator("#graph-panel .entity-panel").wait_for()
                    page.evaluate("window.scrollTo(0, 0)")  # the drawing with the (sticky) panel beside it
                (artifacts / "readme").mkdir(exist_ok=True)
                page.screenshot(path=str(artifacts / "readme" / f"{README_SHOTS[name]}.png"), timeout=90_000)
        context.close()
    assert not problems, "\n".join(problems)
