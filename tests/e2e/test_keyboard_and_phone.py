"""Keyboard and phone use: the collapsible nav, focus kept across HTMX swaps, Enter sends in the chat,
a link to chunk N opens the page at it, and the graph's node list opens the side panel."""

from __future__ import annotations

import pytest

from graph.services import graph_extract_memories, memory_links_refresh
from memories.models import Memory
from tests.e2e.test_pages_everywhere import sign_in
from tests.factories import EntityFactory, UserFactory, make_memory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FOCUSED_ID = "document.activeElement && document.activeElement.id"


def wait_for_focus(page, element_id: str) -> None:
    """Focus is put back after htmx settles a swap, a moment after the new content shows: wait for it."""
    page.wait_for_function(
        "(id) => document.activeElement && document.activeElement.id === id", arg=element_id, timeout=5000
    )


def wait_for_announcement(page, text: str) -> None:
    """The status message of an HTMX action is read out through the page's live region."""
    page.wait_for_function(
        "(text) => document.getElementById('live-status').textContent === text", arg=text, timeout=5000
    )


def wait_for_settle(page) -> None:
    """New content is live (its forms are wired up by htmx) only once the swap has settled, a moment
    after it shows: a person pressing a key in between would submit the form the old-fashioned way."""
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")


def test_phone_nav_collapses_and_opens(browser, live_server, artifacts):
    user = UserFactory()
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 800})
    page = context.new_page()
    sign_in(page, user)
    nav = page.locator("#site-nav")
    assert not nav.is_visible()
    page.click(".nav-toggle")
    assert nav.is_visible() and page.get_attribute(".nav-toggle", "aria-expanded") == "true"
    page.screenshot(path=str(artifacts / "phone-nav-open.png"))
    page.keyboard.press("Escape")
    assert not nav.is_visible()
    context.close()


def test_skip_link_is_the_first_tab_stop(page):
    user = UserFactory()
    sign_in(page, user)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_focus_stays_put_after_pin_add_tag_and_remove_tag(page, artifacts):
    user = UserFactory()
    memory = make_memory(user, content="A note about the garden.", manual_tags=["garden", "plants", "summer"])
    sign_in(page, user)
    page.goto(f"/memories/{memory.pk}/")

    pin = f"pin-button-{memory.pk}"
    page.focus(f"#{pin}")
    page.keyboard.press("Enter")
    page.locator(".tier-card .badge.pinned").wait_for()
    wait_for_focus(page, pin)
    wait_for_announcement(page, "Pinned.")
    wait_for_settle(page)

    page.focus(f"#tag-input-{memory.pk}")
    page.keyboard.type("roses")
    page.keyboard.press("Enter")
    page.locator("#tag-editor .tag-manual", has_text="roses").wait_for()
    wait_for_focus(page, f"tag-input-{memory.pk}")
    wait_for_announcement(page, "Tags now: garden, plants, summer, roses.")
    wait_for_settle(page)

    remove = page.locator("#tag-editor .chip-remove").nth(1)  # "plants"
    remove.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => ![...document.querySelectorAll('#tag-editor .tag-manual')].some((a) => a.textContent === 'plants')"
    )
    # Read out: the swapped tag editor replaced the element htmx names as the target, so the message
    # is looked for in the new content (in the old one it would never be read out).
    wait_for_announcement(page, "Removed tag plants.")
    # Focus moves after htmx settles the swap, a moment after the chip is gone: wait for it.
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.getAttribute('aria-label') === 'Remove tag summer'",
        timeout=5000,
    )  # the chip that took the removed one's place
    page.screenshot(path=str(artifacts / "focus-after-tag-remove.png"))

    page.goto("/memories/")
    toggle = f"pin-toggle-{memory.pk}"
    page.focus(f"#{toggle}")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.getElementById('{toggle}').getAttribute('aria-pressed') === 'false'")
    wait_for_focus(page, toggle)


def test_focus_the_person_moved_during_a_swap_is_left_where_they_put_it(page):
    """New content shows at once and settles a moment later. Someone who tabs on in that moment (here
    a whole second, to make it certain) keeps their focus: putting focus back is only for a swap that
    took it away. Pulled back to the tag box by the settling swap, the Enter meant for the next
    control would submit an empty tag instead."""
    user = UserFactory()
    memory = make_memory(user, content="A note about the orchard.", manual_tags=["orchard"])
    sign_in(page, user)
    page.goto(f"/memories/{memory.pk}/")
    page.evaluate("htmx.config.defaultSettleDelay = 1000")
    page.focus(f"#tag-input-{memory.pk}")
    page.keyboard.type("apples")
    page.keyboard.press("Enter")
    page.locator("#tag-editor .tag-manual", has_text="apples").wait_for()  # swapped, not yet settled
    page.focus(f"#pin-button-{memory.pk}")  # the person moves on
    wait_for_settle(page)
    assert page.evaluate(FOCUSED_ID) == f"pin-button-{memory.pk}"


def test_enter_sends_and_shift_enter_adds_a_line_in_the_chat(page):
    user = UserFactory()
    make_memory(user, title="Offsite", content="The product team offsite will take place in Lisbon in March.")
    sign_in(page, user)
    page.goto("/chat/")
    box = page.locator("textarea[name=content]")
    box.focus()
    page.keyboard.type("Where is the")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("product team offsite?")
    assert box.input_value() == "Where is the\nproduct team offsite?"
    page.keyboard.press("Enter")
    page.locator(".chat-message.reply").first.wait_for()
    reply = page.locator(".chat-message.reply").first
    assert "Lisbon" in reply.locator(".answer").inner_text()
    cite = reply.locator(".answer .cite").first
    assert "chunk=0#chunk-0" in cite.get_attribute("href")


def test_a_link_to_a_late_chunk_opens_its_page_and_highlights_it(page, artifacts):
    user = UserFactory()
    content = "\n\n".join(
        f"Section {i}. " + f"Paragraph {i} of the long report on project {i}. " * 12 for i in range(60)
    )
    memory = make_memory(user, content=content, title="Long report")
    last = memory.chunks.count() - 1
    sign_in(page, user)
    page.goto(f"/memories/{memory.pk}/?chunk={last}#chunk-{last}")
    chunk = page.locator(f"#chunk-{last}")
    assert "highlight" in chunk.get_attribute("class")
    assert chunk.is_visible() and page.locator("#chunk-0").count() == 0
    box = chunk.bounding_box()
    assert 0 <= box["y"] < 900
    page.screenshot(path=str(artifacts / "long-memory-chunk.png"))


def test_the_graph_node_list_opens_the_side_panel_by_keyboard(page):
    user = UserFactory()
    memories = [
        make_memory(user, text)
        for text in (
            "Alice works with the Product Team, which is based in San Francisco.",
            "Bob joined the Design Team in Berlin.",
        )
    ]
    graph_extract_memories(memory_ids=[m.pk for m in memories])
    memory_links_refresh(owner=user)
    sign_in(page, user)
    page.goto("/graph/")
    page.wait_for_selector("#cy[data-ready=true]")
    link = page.locator("#graph-list a", has_text="Berlin")
    link.focus()
    page.keyboard.press("Enter")
    page.locator("#graph-panel .panel-title", has_text="Berlin").wait_for()
    assert page.evaluate("window.kybernesisGraph.$(':selected').data('label')") == "Berlin"


def test_the_drop_zone_shows_keyboard_focus_on_its_hidden_file_input(page, artifacts):
    user = UserFactory()
    sign_in(page, user)
    page.goto("/upload/")
    page.focus("#id_tags")  # the tags come first: files are sent as soon as they are chosen
    page.keyboard.press("Tab")  # on to the file input, hidden once JavaScript runs
    assert page.evaluate("document.activeElement.id") == "id_files"
    outline = page.evaluate("getComputedStyle(document.getElementById('dropzone')).outlineStyle")
    assert outline == "solid"
    page.screenshot(path=str(artifacts / "upload-dropzone-focus.png"))


def _graph_of_many_nodes(user, n: int = 40):
    for i in range(n):
        EntityFactory(owner=user, name=f"Place {i:02d}", type="location", salience=1 - i / 100)


def test_every_node_of_a_long_graph_list_is_in_view_of_its_vertical_scroll(page):
    """A grid, not CSS columns: under a max-height, columns past the second run off to the right of the
    card, and most nodes would sit in a sideways scroll nobody sees."""
    user = UserFactory()
    _graph_of_many_nodes(user)
    sign_in(page, user)
    page.goto("/graph/")
    page.wait_for_selector("#cy[data-ready=true]")
    page.click("#graph-list summary")
    box = page.locator("#graph-list ul").evaluate(
        "u => ({sw: u.scrollWidth, cw: u.clientWidth, right: u.getBoundingClientRect().right,"
        " links: [...u.querySelectorAll('a')].map(a => a.getBoundingClientRect().right)})"
    )
    assert len(box["links"]) == 40
    assert box["sw"] <= box["cw"] and max(box["links"]) <= box["right"]


def test_on_a_phone_a_node_tapped_in_the_drawing_brings_its_panel_into_view(browser, live_server):
    user = UserFactory()
    _graph_of_many_nodes(user)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 800})
    page = context.new_page()
    sign_in(page, user)
    page.goto("/graph/")
    page.click("#graph-mode-drawing")  # a phone opens on the list of clusters
    page.wait_for_selector("#cy[data-ready=true]")
    panel_top = "document.getElementById('graph-panel').getBoundingClientRect().top"
    assert page.evaluate(panel_top) > 800  # below the drawing and the node list, out of sight
    # In a block, so that evaluate returns nothing: the node emit returns has cycles through the
    # whole graph, and serialising it back to Python takes seconds.
    page.evaluate("() => { window.kybernesisGraph.nodes()[0].emit('tap'); }")
    page.locator("#graph-panel .panel-title").wait_for()
    page.wait_for_function(f"() => {panel_top} >= -1 && {panel_top} < 800 - 150")
    context.close()


def test_a_form_sent_back_with_an_error_puts_focus_on_the_field_to_fix(page):
    user = UserFactory()
    memory = make_memory(user, content="Keep me.")
    sign_in(page, user)
    page.goto(f"/memories/{memory.pk}/edit/")
    page.fill("[name=metadata]", '{"trip": "lisbon"')
    page.focus("main button[type=submit]")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'id_metadata'")


def test_the_graph_types_drop_down_lays_its_boxes_beside_their_labels_and_closes_on_escape(page):
    user = UserFactory()
    memory = make_memory(user, "Alice works with the Product Team, which is based in San Francisco.")
    graph_extract_memories(memory_ids=[memory.pk])
    sign_in(page, user)
    page.goto("/graph/")
    summary = page.locator(".type-filter summary")
    summary.focus()
    page.keyboard.press("Enter")
    box = page.locator(".type-filter input[type=checkbox]").first
    label = page.locator(".type-filter label").first
    # Each box sits beside its label (a filter's minimum width would stretch it onto a line of its own).
    assert box.bounding_box()["width"] < 30 and label.bounding_box()["height"] < 40
    box.focus()
    page.keyboard.press("Escape")
    assert not page.evaluate("document.querySelector('.type-filter').open")
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"


def test_save_pressed_again_while_a_note_is_saved_stores_it_once(page):
    """A long note takes a while to embed, and each press of Save would send it again. The button is
    disabled while it is sent, and the server stores the same content once."""
    user = UserFactory()
    sign_in(page, user)
    page.goto("/memories/new/")
    page.fill("[name=content]", "The spare key is under the blue flowerpot by the shed.")
    button = page.locator("main button[type=submit]")
    with page.expect_navigation():
        button.click()
        page.evaluate("document.querySelector('main form').requestSubmit()")  # a second press, at once
    assert Memory.objects.filter(owner=user).count() == 1
    # Sending the same note again (the form resent) leads to the memory that has it.
    page.goto("/memories/new/")
    page.fill("[name=content]", "The spare key is under the blue flowerpot by the shed.")
    with page.expect_navigation():
        button.click()
    assert "You already have this memory" in page.locator(".messages").inner_text()
    assert Memory.objects.filter(owner=user).count() == 1


def test_on_a_touch_screen_the_small_controls_are_at_least_24_px(browser, live_server):
    """A tag's × and a row's box are at least 24 × 24 px, as WCAG 2.2 asks."""
    user = UserFactory()
    memory = make_memory(user, "Tomatoes go in the south bed.", title="Garden", manual_tags=["garden"])
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    sign_in(page, user)
    row = page.locator(".row-select").first.bounding_box()
    page.goto(f"/memories/{memory.pk}/")
    remove = page.locator(".chip-remove").first.bounding_box()
    for box in (row, remove):
        assert box["width"] >= 24 and box["height"] >= 24, box
    context.close()
