"""Notion sync against the fake Notion API: search by last edit, block trees as text, incremental runs."""

from __future__ import annotations

import pytest

from connectors.models import ConnectorAccount, ConnectorItem
from connectors.providers import notion as notion_provider
from memories.models import Memory, Source, Tier
from tests.connectors.conftest import connect_notion, sync
from tests.fakes.base import Response
from tests.fakes.notion import block, notion_error, rich

Status = ConnectorItem.Status


def memory_for(account, page) -> Memory:
    return ConnectorItem.objects.get(account=account, external_id=page["id"]).memory


def test_a_first_sync_walks_every_search_page_and_stores_pages_as_connector_memories(
    notion_account, fake_notion, monkeypatch
):
    monkeypatch.setattr(notion_provider, "PAGE_SIZE", 2)
    pages = [fake_notion.add_page(f"Meeting {i}", [block("paragraph", f"Minutes of meeting {i}.")]) for i in range(5)]

    account = sync(notion_account)

    searches = fake_notion.calls("/v1/search")
    assert len(searches) == 3
    assert searches[0].json()["sort"] == {"direction": "descending", "timestamp": "last_edited_time"}
    assert searches[0].json()["filter"] == {"property": "object", "value": "page"}
    assert [s.json().get("start_cursor") for s in searches][1:] == [pages[2]["id"], pages[0]["id"]]
    assert account.status == ConnectorAccount.Status.SYNCED and account.synced_count == 5
    memory = memory_for(account, pages[3])
    assert memory.title == "Meeting 3" and memory.content == "Minutes of meeting 3."
    assert memory.source == Source.CONNECTOR
    assert memory.metadata["provider"] == "notion" and memory.metadata["externalId"] == pages[3]["id"]
    assert memory.metadata["url"] == pages[3]["url"]
    assert "notion" in memory.tags
    # The cursor is the newest last_edited_time stored.
    assert account.cursor.startswith(pages[4]["last_edited_time"][:16])


def test_nested_blocks_render_as_markdown_like_text(notion_account, fake_notion):
    page = fake_notion.add_page(
        "Handbook",
        [
            block("heading_1", "Handbook"),
            block("paragraph", "Welcome to the team."),
            block("heading_2", "Checklist"),
            block("to_do", "Get a laptop", checked=True),
            block("to_do", "Meet your buddy", checked=False),
            block(
                "bulleted_list_item",
                "Tools",
                children=[
                    block("bulleted_list_item", "Editor", children=[block("bulleted_list_item", "Vim or VS Code")]),
                ],
            ),
            block("numbered_list_item", "Clone the repo"),
            block("numbered_list_item", "Run make test"),
            block("code", "make run", language="shell"),
            block("quote", "Ship small changes."),
            block("callout", "Ask questions early.", icon={"type": "emoji", "emoji": "💡"}),
            block("toggle", "More", children=[block("paragraph", "Hidden detail.")]),
            block(
                "table",
                None,
                table_width=2,
                has_column_header=True,
                has_row_header=False,
                children=[
                    block("table_row", None, cells=[rich("Tool"), rich("Cost")]),
                    block("table_row", None, cells=[rich("Laptop"), rich("1200")]),
                ],
            ),
            block("divider"),
            block("child_page", None, title="Onboarding notes"),
        ],
    )

    account = sync(notion_account)

    assert memory_for(account, page).content == (
        "# Handbook\nWelcome to the team.\n\n## Checklist\n- [x] Get a laptop\n- [ ] Meet your buddy\n"
        "- Tools\n  - Editor\n    - Vim or VS Code\n1. Clone the repo\n2. Run make test\n"
        "```shell\nmake run\n```\n> Ship small changes.\n> 💡 Ask questions early.\n- More\n  Hidden detail.\n\n"
        "| Tool | Cost |\n| --- | --- |\n| Laptop | 1200 |\n\n---\nPage: Onboarding notes"
    )
    item = ConnectorItem.objects.get(external_id=page["id"])
    assert item.status == Status.SYNCED and item.error == ""


def test_database_rows_are_synced_as_pages_with_their_properties(notion_account, fake_notion):
    row = fake_notion.add_page(
        "Fix login bug",
        [block("paragraph", "Users are logged out after a minute.")],
        database_id="db-1",
        properties={
            "Status": {"id": "s", "type": "status", "status": {"name": "In progress"}},
            "Tags": {"id": "t", "type": "multi_select", "multi_select": [{"name": "auth"}, {"name": "urgent"}]},
            "Estimate": {"id": "e", "type": "number", "number": 3},
        },
    )

    account = sync(notion_account)

    memory = memory_for(account, row)
    assert memory.title == "Fix login bug"
    assert memory.content == (
        "Status: In progress\nTags: auth, urgent\nEstimate: 3\n\nUsers are logged out after a minute."
    )
    assert memory.metadata["notionParent"] == "database_id"


def test_an_incremental_sync_stops_at_the_stored_watermark_and_applies_edits_additions_and_archiving(
    notion_account, fake_notion, monkeypatch
):
    monkeypatch.setattr(notion_provider, "PAGE_SIZE", 2)
    old = [fake_notion.add_page(f"Old {i}", [block("paragraph", f"Old page {i}.")]) for i in range(4)]
    edited = fake_notion.add_page("Edited", [block("paragraph", "Before.")])
    archived = fake_notion.add_page("Archived", [block("paragraph", "Soon gone.")])
    account = sync(notion_account)
    edited_memory = memory_for(account, edited)
    fake_notion.requests.clear()

    fake_notion.edit_page(edited["id"], blocks=[block("paragraph", "After.")], title="Edited again")
    added = fake_notion.add_page("Added", [block("paragraph", "A new page.")])
    fake_notion.archive_page(archived["id"])
    account = sync(account)

    assert len(fake_notion.calls("/v1/search")) == 2  # stopped before reaching the old pages
    assert not any(old_page["id"] in r.path for old_page in old for r in fake_notion.requests)
    updated = Memory.objects.get(pk=edited_memory.pk)
    assert updated.content == "After." and updated.title == "Edited again"
    assert memory_for(account, added).content == "A new page."
    archived_item = ConnectorItem.objects.get(external_id=archived["id"])
    assert archived_item.status == Status.REMOVED and archived_item.memory.tier == Tier.ARCHIVE


def test_a_second_sync_right_after_the_first_creates_and_changes_nothing(notion_account, fake_notion):
    for i in range(3):
        fake_notion.add_page(f"Page {i}", [block("paragraph", f"Body {i}.")])
    account = sync(notion_account)
    memories = {m.pk: m.updated_at for m in Memory.objects.all()}
    items = {i.pk: i.updated_at for i in ConnectorItem.objects.all()}

    account = sync(account)

    assert {m.pk: m.updated_at for m in Memory.objects.all()} == memories
    assert {i.pk: i.updated_at for i in ConnectorItem.objects.all()} == items
    assert account.status == ConnectorAccount.Status.SYNCED


def test_an_edit_within_the_same_minute_as_the_watermark_is_still_picked_up(notion_account, fake_notion):
    page = fake_notion.add_page("Draft", [block("paragraph", "First words.")])
    account = sync(notion_account)
    # Notion rounds last_edited_time to the minute, so this edit keeps the same timestamp.
    fake_notion._store_blocks(page["id"], [block("paragraph", "Second words.")])

    sync(account)

    assert memory_for(account, page).content == "Second words."


def test_a_page_with_ten_thousand_blocks_is_skipped_with_the_reason(notion_account, fake_notion):
    huge = fake_notion.add_page("Huge", [block("paragraph", f"Line {i}") for i in range(10_000)])
    fake_notion.add_page("Small", [block("paragraph", "Fine.")])

    account = sync(notion_account)

    item = ConnectorItem.objects.get(external_id=huge["id"])
    assert item.status == Status.SKIPPED
    assert item.error == "the page has more than 5,000 blocks; the limit is 5,000 (KYBERNESIS_NOTION_MAX_BLOCKS)"
    assert account.synced_count == 1


def test_an_unknown_block_type_is_left_out_with_a_note_and_the_rest_synced(notion_account, fake_notion):
    page = fake_notion.add_page(
        "Mixed", [block("paragraph", "Known text."), block("hologram", None, spin=3), block("unsupported", None)]
    )

    account = sync(notion_account)

    item = ConnectorItem.objects.get(external_id=page["id"])
    assert item.status == Status.SYNCED and item.memory.content == "Known text."
    assert item.error == "2 blocks of a type Kybernesis cannot read (hologram, unsupported) left out"
    assert account.status == ConnectorAccount.Status.SYNCED


def test_malformed_blocks_fail_the_page_with_the_reason_and_other_pages_sync(notion_account, fake_notion):
    bad = fake_notion.add_page("Bad", [])
    fake_notion.children[bad["id"]] = [{"object": "block", "id": "b1", "has_children": False}]  # no "type"
    wrong = fake_notion.add_page("Wrong", [])
    fake_notion.children[wrong["id"]] = [
        {"object": "block", "id": "b2", "type": "paragraph", "paragraph": {"rich_text": "not a list"}}
    ]
    fake_notion.add_page("Good", [block("paragraph", "Good text.")])

    account = sync(notion_account)

    bad_item = ConnectorItem.objects.get(external_id=bad["id"])
    assert bad_item.status == Status.FAILED and "malformed block from the API (type: field required)" in bad_item.error
    wrong_item = ConnectorItem.objects.get(external_id=wrong["id"])
    assert wrong_item.status == Status.FAILED and "rich text" in wrong_item.error
    assert account.synced_count == 1 and account.status == ConnectorAccount.Status.SYNCED


def test_a_search_result_missing_fields_is_recorded_on_its_item(notion_account, fake_notion):
    fake_notion.add_page("Good", [block("paragraph", "Good text.")])
    fake_notion.script(
        "/v1/search",
        Response.json(
            {
                "object": "list",
                "results": [
                    {"object": "page", "id": "p-broken", "properties": {}},
                    fake_notion._public(next(iter(fake_notion.pages.values()))),
                ],
                "next_cursor": None,
                "has_more": False,
            }
        ),
    )

    account = sync(notion_account)

    item = ConnectorItem.objects.get(external_id="p-broken")
    assert item.status == Status.FAILED and "last_edited_time: field required" in item.error
    assert account.synced_count == 1


def test_an_empty_page_is_skipped_as_having_no_text(notion_account, fake_notion):
    page = fake_notion.add_page("Empty", [])

    sync(notion_account)

    item = ConnectorItem.objects.get(external_id=page["id"])
    assert item.status == Status.SKIPPED and item.error == "the page has no text"


def test_a_429_from_notion_is_retried_after_retry_after(notion_account, fake_notion, waits):
    fake_notion.add_page("Page", [block("paragraph", "Text.")])
    fake_notion.script(
        "/v1/search", notion_error(429, "rate_limited", "You have been rate limited.", headers={"Retry-After": "2"})
    )
    fake_notion.script("/children", notion_error(502, "bad_gateway", "Bad gateway."))

    account = sync(notion_account)

    assert waits[0] == 2.0 and len(waits) == 2
    assert account.synced_count == 1


def test_a_revoked_notion_token_sets_reconnect_needed(notion_account, fake_notion, waits):
    fake_notion.add_page("Page", [block("paragraph", "Text.")])
    fake_notion.revoke_everything()

    account = sync(notion_account)

    assert account.status == ConnectorAccount.Status.RECONNECT
    assert account.last_error == (
        "Notion refused the stored token (it was revoked or has expired). Reconnect to sync again."
    )
    assert waits == [] and len(fake_notion.calls("/v1/search")) == 1


def test_one_users_notion_never_syncs_into_another_users_memories(user, other_user, fake_notion):
    mine = connect_notion(user, fake_notion, "acme")
    theirs = connect_notion(other_user, fake_notion, "globex")
    fake_notion.add_page("Acme plans", [block("paragraph", "Acme only.")], workspace="acme")
    fake_notion.add_page("Globex plans", [block("paragraph", "Globex only.")], workspace="globex")

    sync(mine)
    sync(theirs)

    assert list(Memory.objects.for_user(user).values_list("content", flat=True)) == ["Acme only."]
    assert list(Memory.objects.for_user(other_user).values_list("content", flat=True)) == ["Globex only."]


@pytest.mark.parametrize(
    "rich_text, expected",
    [
        ([{"plain_text": "a"}, {"plain_text": "b"}], "ab"),
        ([{"type": "text", "text": {"content": "no plain"}}], "no plain"),
        ([], ""),
    ],
)
def test_rich_text_is_read_from_plain_text_or_the_text_content(rich_text, expected):
    assert notion_provider.plain(rich_text) == expected
