"""Notion: pages (database rows included) from the search API, newest edits first, with their block
trees rendered to Markdown-like text."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from connectors import oauth
from connectors.providers.client import ProviderClient
from connectors.providers.errors import ItemFailed, ItemSkipped, MalformedResponse, gone_on_404, parse
from connectors.providers.sync import Content, ProviderSync, RemoteDocument, Sink

NOTION_VERSION = "2022-06-28"
PAGE_SIZE = 100
# Deeper nesting than this is almost certainly a loop (synced blocks can refer to each other).
MAX_DEPTH = 30
# Blocks that carry no text of their own and need no mention.
SILENT_TYPES = {
    "breadcrumb",
    "table_of_contents",
    "column_list",
    "column",
    "synced_block",
    "template",
    "link_to_page",
    "divider",
}
MEDIA_TYPES = {"image", "video", "audio", "file", "pdf"}


class ListPage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[dict]
    next_cursor: str | None = None
    has_more: bool = False


class NotionPage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    object: str = "page"
    id: str = Field(min_length=1, max_length=255)
    last_edited_time: datetime
    url: str = ""
    archived: bool = False
    in_trash: bool = False
    properties: dict = Field(default_factory=dict)
    parent: dict = Field(default_factory=dict)


class Block(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str = ""
    type: str = Field(min_length=1)
    has_children: bool = False


def plain(rich_text) -> str:
    """The plain text of a rich text array."""
    if not isinstance(rich_text, list):
        raise MalformedResponse("malformed rich text from the API (expected a list)")
    parts = []
    for item in rich_text:
        if not isinstance(item, dict):
            raise MalformedResponse("malformed rich text from the API (expected objects)")
        text = item.get("plain_text")
        if text is None and isinstance(item.get("text"), dict):
            text = item["text"].get("content")
        if text is not None and not isinstance(text, str):
            raise MalformedResponse("malformed rich text from the API (plain_text is not a string)")
        parts.append(text or "")
    return "".join(parts)


def page_title(page: NotionPage) -> str:
    for prop in page.properties.values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            return " ".join(plain(prop.get("title", [])).split())
    return ""


def _property_text(prop: dict) -> str:
    kind = prop.get("type")
    value = prop.get(kind)
    if kind in ("rich_text", "title"):
        return plain(value or [])
    if kind in ("number", "url", "email", "phone_number") and value is not None:
        return str(value)
    if kind in ("select", "status") and isinstance(value, dict):
        return str(value.get("name") or "")
    if kind == "multi_select" and isinstance(value, list):
        return ", ".join(str(v.get("name")) for v in value if isinstance(v, dict) and v.get("name"))
    if kind == "checkbox" and isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "date" and isinstance(value, dict) and value.get("start"):
        return str(value["start"]) + (f" → {value['end']}" if value.get("end") else "")
    return ""


def row_properties(page: NotionPage) -> list[str]:
    """A database row's other columns as `Name: value` lines, so a row with an empty body still says something."""
    if page.parent.get("type") != "database_id":
        return []
    lines = []
    for name, prop in page.properties.items():
        if isinstance(prop, dict) and prop.get("type") != "title":
            text = _property_text(prop).strip()
            if text:
                lines.append(f"{name}: {text}")
    return lines


class BlockRenderer:
    """Renders a block tree to Markdown-like text, fetching children page by page."""

    def __init__(self, client: NotionClient, *, max_blocks: int):
        self.client = client
        self.max_blocks = max_blocks
        self.count = 0
        self.unknown: dict[str, int] = {}

    def render(self, block_id: str, depth: int = 0) -> list[str]:
        if depth > MAX_DEPTH:
            raise ItemFailed(f"the blocks are nested more than {MAX_DEPTH} levels deep")
        lines: list[str] = []
        number = 0
        for blocks, _ in self.client.paginate(lambda cursor: self.client.block_children(block_id, cursor)):
            for raw in blocks:
                self._count()
                block = parse(Block, raw, what="block")
                number = number + 1 if block.type == "numbered_list_item" else 0
                lines.extend(self.block(block, depth, number))
        return lines

    def _count(self) -> None:
        self.count += 1
        if self.count > self.max_blocks:
            raise ItemSkipped(
                f"the page has more than {self.max_blocks:,} blocks; the limit is "
                f"{self.max_blocks:,} (KYBERNESIS_NOTION_MAX_BLOCKS)"
            )

    def _children(self, block: Block, depth: int) -> list[str]:
        return self.render(block.id, depth + 1) if block.has_children and block.id else []

    def block(self, block: Block, depth: int, number: int) -> list[str]:
        data = (block.model_extra or {}).get(block.type)
        data = data if isinstance(data, dict) else {}
        kind = block.type
        text = plain(data.get("rich_text", [])) if "rich_text" in data else ""
        indent = "  "
        if kind == "paragraph":
            return [text, *self._children(block, depth)] if text or block.has_children else [""]
        if kind.startswith("heading_") and kind[-1] in "123":
            return ["", "#" * int(kind[-1]) + " " + text, *self._children(block, depth)]
        if kind in ("bulleted_list_item", "numbered_list_item", "to_do", "toggle"):
            marker = _list_marker(kind, data, number)
            return [marker + text, *(indent + line if line else line for line in self._children(block, depth))]
        if kind == "code":
            language = data.get("language") if isinstance(data.get("language"), str) else ""
            return [f"```{'' if language == 'plain text' else language}", text, "```"]
        if kind in ("quote", "callout"):
            icon = data.get("icon") if kind == "callout" else None
            emoji = icon.get("emoji") + " " if isinstance(icon, dict) and isinstance(icon.get("emoji"), str) else ""
            body = [emoji + text, *self._children(block, depth)]
            return ["> " + line if line else ">" for line in "\n".join(body).split("\n")]
        if kind == "table":
            return ["", *self.table(block, data), ""]
        if kind == "equation":
            return [str(data.get("expression") or "")]
        if kind in ("child_page", "child_database"):
            label = "Page" if kind == "child_page" else "Database"
            return [f"{label}: {data.get('title') or 'Untitled'}"]
        if kind in ("bookmark", "embed", "link_preview") or kind in MEDIA_TYPES:
            return [_captioned(kind, data)]
        if kind == "divider":
            return ["---"]
        if kind in SILENT_TYPES:
            return self._children(block, depth)
        # "unsupported" is Notion's own name for blocks its API cannot show; anything else is new to us.
        self.unknown[kind] = self.unknown.get(kind, 0) + 1
        return self._children(block, depth)

    def table(self, block: Block, data: dict) -> list[str]:
        rows = []
        for blocks, _ in self.client.paginate(lambda cursor: self.client.block_children(block.id, cursor)):
            for raw in blocks:
                self._count()
                row = parse(Block, raw, what="table row")
                cells = ((row.model_extra or {}).get("table_row") or {}).get("cells")
                if row.type != "table_row" or not isinstance(cells, list):
                    raise MalformedResponse("malformed table row from the API (no cells)")
                rows.append("| " + " | ".join(" ".join(plain(cell).split()) for cell in cells) + " |")
        if rows and data.get("has_column_header"):
            width = rows[0].count(" | ") + 1
            rows.insert(1, "|" + " --- |" * width)
        return rows

    def note(self) -> str:
        if not self.unknown:
            return ""
        total = sum(self.unknown.values())
        kinds = ", ".join(sorted(self.unknown))
        return f"{total} block{'s' if total != 1 else ''} of a type Kybernesis cannot read ({kinds}) left out"


def _list_marker(kind: str, data: dict, number: int) -> str:
    if kind == "numbered_list_item":
        return f"{number}. "
    if kind == "to_do":
        return "- [x] " if data.get("checked") is True else "- [ ] "
    return "- "


def _captioned(kind: str, data: dict) -> str:
    """A link block as its caption and URL; a media block as a placeholder with its caption."""
    caption = plain(data.get("caption", [])) if data.get("caption") else ""
    if kind in MEDIA_TYPES:
        return f"[{kind}: {caption}]" if caption else f"[{kind}]"
    return " ".join(part for part in (caption, str(data.get("url") or "")) if part)


def tidy(lines: list[str]) -> str:
    text = "\n".join(lines).strip("\n")
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


class NotionClient(ProviderClient):
    name = "Notion"
    social_provider = "notion"

    def api(self, path: str) -> str:
        return oauth.notion_url("/v1" + path)

    def auth_headers(self) -> dict:
        return {**super().auth_headers(), "Notion-Version": NOTION_VERSION}

    def error_message(self, response) -> str:
        try:
            body = response.json()
            return str(body.get("message") or body.get("code"))[:200]
        except (ValueError, AttributeError):
            return super().error_message(response)

    # Public integrations may be given a refresh token (Notion added them in 2025); older tokens never expire.
    refresh_refused_message = "Notion refused to renew access. Reconnect Notion to sync again."

    def refresh_request(self, app, refresh_token: str) -> dict:
        return self.json(
            "POST",
            self.api("/oauth/token"),
            authenticated=False,
            auth=(app.client_id, app.secret),
            json={"grant_type": "refresh_token", "refresh_token": refresh_token},
        )

    def revoke(self) -> None:
        app = self.social_app()
        self.request(
            "POST",
            self.api("/oauth/revoke"),
            authenticated=False,
            auth=(app.client_id, app.secret),
            json={"token": self.social_token().token},
            headers={"Notion-Version": NOTION_VERSION},
        )

    def search(self, start_cursor: str | None) -> tuple[list, str | None]:
        body = {
            "filter": {"property": "object", "value": "page"},
            "sort": {"direction": "descending", "timestamp": "last_edited_time"},
            "page_size": PAGE_SIZE,
        }
        if start_cursor:
            body["start_cursor"] = start_cursor
        page = parse(ListPage, self.json("POST", self.api("/search"), json=body), what="search response")
        return page.results, page.next_cursor if page.has_more else None

    def page(self, page_id: str) -> NotionPage:
        with gone_on_404(page_id):
            data = self.json("GET", self.api(f"/pages/{page_id}"))
        return parse(NotionPage, data, what="page")

    def block_children(self, block_id: str, start_cursor: str | None) -> tuple[list, str | None]:
        params = {"page_size": PAGE_SIZE}
        if start_cursor:
            params["start_cursor"] = start_cursor
        page = parse(
            ListPage,
            self.json("GET", self.api(f"/blocks/{block_id}/children"), params=params),
            what="block children response",
        )
        return page.results, page.next_cursor if page.has_more else None

    def content(self, page: NotionPage) -> Content:
        renderer = BlockRenderer(self, max_blocks=settings.KYBERNESIS_NOTION_MAX_BLOCKS)
        try:
            with gone_on_404(page.id):
                body = renderer.render(page.id)
        except MalformedResponse as exc:
            raise ItemFailed(str(exc)) from exc
        properties = row_properties(page)
        text = tidy([*properties, *([""] if properties and body else []), *body])
        if not text.strip():
            raise ItemSkipped("the page has no text")
        metadata = {"notionParent": page.parent.get("type", "")} if page.parent.get("type") else {}
        return Content(text=text, metadata=metadata, note=renderer.note())


class NotionSync(ProviderSync):
    """Walks the search results newest edit first and stops at the stored watermark."""

    client_class = NotionClient
    item_noun = "page"

    def fetch(self, external_id: str) -> NotionPage:
        page = self.client.page(external_id)
        page_title(page)  # a malformed title fails the page here, as in a listing
        return page

    def sync(self, sink: Sink) -> None:
        watermark = _parse_time(self.account.cursor)
        state = dict(self.account.sync_state or {})
        newest = _parse_time(state.get("newest", "")) or watermark
        start = state.get("searchCursor")
        if start and state.get("watermark", "") != (self.account.cursor or ""):
            start = None
        for results, next_cursor in self.client.paginate(self.client.search, start):
            reached_known = False
            for raw in results:
                edited = _edited_time(raw)
                if watermark and edited is not None and edited < watermark:
                    reached_known = True
                    break
                if edited is not None and (newest is None or edited > newest):
                    newest = edited
                self.handle(sink, raw, watermark=watermark)
            if reached_known or not next_cursor:
                sink.checkpoint(cursor=newest.isoformat() if newest else "", state={})
                return
            sink.checkpoint(
                state={
                    "searchCursor": next_cursor,
                    "newest": newest.isoformat() if newest else "",
                    "watermark": self.account.cursor or "",
                }
            )

    def listed(self, raw: dict) -> bool:
        return raw.get("object", "page") == "page"

    def parse_entry(self, raw: dict) -> NotionPage:
        page = parse(NotionPage, raw, what="page")
        page_title(page)  # a malformed title fails the page here rather than in report()
        return page

    def report(self, sink: Sink, page: NotionPage, *, watermark=None) -> None:
        title = page_title(page)
        if page.archived or page.in_trash:
            sink.removed(page.id)
            return
        sink.document(
            RemoteDocument(
                external_id=page.id,
                title=title or "Untitled",
                mime="notion/page",
                url=page.url,
                modified_at=page.last_edited_time,
                load=lambda: self.client.content(page),
                # Notion rounds last_edited_time to the minute: an edit in the minute of the watermark
                # keeps the same time, so those pages are read again (their hash stops a needless update).
                recheck=watermark is not None and page.last_edited_time == watermark,
            )
        )


def _parse_time(value) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _edited_time(raw) -> datetime | None:
    return _parse_time(raw.get("last_edited_time")) if isinstance(raw, dict) else None
