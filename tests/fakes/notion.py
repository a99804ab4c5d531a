"""A fake Notion API: OAuth (authorize, token, revoke), search, retrieve a page and retrieve block
children, with Notion's list shape {"object": "list", "results", "next_cursor", "has_more"} and error
shape {"object": "error", "status", "code", "message"}."""

from __future__ import annotations

import base64
import itertools
import secrets
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from tests.fakes.base import FakeServer, Request, Response

NOTION_VERSION = "2022-06-28"


def notion_error(status: int, code: str, message: str, headers: dict | None = None) -> Response:
    return Response.json(
        {"object": "error", "status": status, "code": code, "message": message, "request_id": str(uuid.uuid4())},
        status=status,
        headers=headers,
    )


def rich(text: str) -> list[dict]:
    return [
        {
            "type": "text",
            "text": {"content": text, "link": None},
            "annotations": {"bold": False},
            "plain_text": text,
            "href": None,
        }
    ]


def block(kind: str, text: str | None = None, *, children: list[dict] | None = None, **data) -> dict:
    """A block as Notion returns it; `children` are served from its /children endpoint."""
    body = dict(data)
    if text is not None:
        body["rich_text"] = rich(text)
    return {
        "object": "block",
        "id": str(uuid.uuid4()),
        "type": kind,
        kind: body,
        "has_children": bool(children),
        "_children": children or [],
    }


class FakeNotion(FakeServer):
    def __init__(self, *, client_id: str = "notion-client-id", client_secret: str = "notion-client-secret"):
        super().__init__()
        self.client_id = client_id
        self.client_secret = client_secret
        self.pages: dict[str, dict] = {}  # id -> page object (with a private "_workspace")
        self.children: dict[str, list[dict]] = {}
        self.tokens: dict[str, str] = {}  # access token -> workspace
        self.codes: dict[str, dict] = {}
        self.revoked: list[str] = []
        self.authorize_as = "acme"
        # The redirect URI registered with the integration; Notion uses it when the request names none.
        self.redirect_uri = "http://testserver/accounts/notion/login/callback/"
        self._clock = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
        self._ids = itertools.count(1)

    # --- test helpers -----------------------------------------------------------------------------

    def _tick(self) -> str:
        # Notion's timestamps are rounded to the minute.
        self._clock += timedelta(minutes=1)
        return self._clock.strftime("%Y-%m-%dT%H:%M:00.000Z")

    def _store_blocks(self, parent_id: str, blocks: list[dict]) -> None:
        stored = []
        for item in blocks:
            kids = item.pop("_children", [])
            stored.append(item)
            if kids:
                self._store_blocks(item["id"], kids)
        self.children[parent_id] = stored

    def add_page(
        self,
        title: str,
        blocks: list[dict] | None = None,
        *,
        workspace: str = "acme",
        database_id: str | None = None,
        properties: dict | None = None,
    ) -> dict:
        with self.lock:
            page_id = str(uuid.uuid4())
            edited = self._tick()
            props = {"Name" if database_id else "title": {"id": "title", "type": "title", "title": rich(title)}}
            props.update(properties or {})
            page = {
                "object": "page",
                "id": page_id,
                "created_time": edited,
                "last_edited_time": edited,
                "archived": False,
                "in_trash": False,
                "properties": props,
                "parent": {"type": "database_id", "database_id": database_id}
                if database_id
                else {"type": "workspace", "workspace": True},
                "url": f"https://www.notion.so/{title.replace(' ', '-')}-{page_id.replace('-', '')}",
                "_workspace": workspace,
            }
            self.pages[page_id] = page
            self._store_blocks(page_id, blocks or [])
            return page

    def edit_page(self, page_id: str, *, blocks: list[dict] | None = None, title: str | None = None) -> dict:
        with self.lock:
            page = self.pages[page_id]
            if blocks is not None:
                self._store_blocks(page_id, blocks)
            if title is not None:
                key = next(k for k, v in page["properties"].items() if v["type"] == "title")
                page["properties"][key]["title"] = rich(title)
            page["last_edited_time"] = self._tick()
            return page

    def archive_page(self, page_id: str) -> None:
        with self.lock:
            self.pages[page_id]["archived"] = self.pages[page_id]["in_trash"] = True
            self.pages[page_id]["last_edited_time"] = self._tick()

    def issue_token(self, workspace: str = "acme") -> str:
        with self.lock:
            token = "ntn_" + secrets.token_urlsafe(20)
            self.tokens[token] = workspace
            return token

    def revoke_everything(self, workspace: str = "acme") -> None:
        with self.lock:
            self.tokens = {t: w for t, w in self.tokens.items() if w != workspace}

    # --- routing ----------------------------------------------------------------------------------

    def route(self, request: Request) -> Response:
        path = request.path
        if path == "/v1/oauth/authorize":
            return self._authorize(request)
        if path in ("/v1/oauth/token", "/v1/oauth/revoke") and request.method == "POST":
            if not self._client_ok(request):
                return Response.json({"error": "invalid_client"}, status=401)
            if path.endswith("revoke"):
                token = request.json().get("token", "")
                self.revoked.append(token)
                self.tokens.pop(token, None)
                return Response.json({"request_id": str(uuid.uuid4())})
            return self._token(request)
        if request.headers.get("notion-version") != NOTION_VERSION:
            return notion_error(400, "missing_version", "Notion-Version header failed validation.")
        auth = request.headers.get("authorization", "")
        workspace = self.tokens.get(auth.removeprefix("Bearer ").strip())
        if not auth.startswith("Bearer ") or workspace is None:
            return notion_error(401, "unauthorized", "API token is invalid.")
        if path == "/v1/search" and request.method == "POST":
            return self._search(request, workspace)
        if path.startswith("/v1/pages/"):
            page = self.pages.get(path.rsplit("/", 1)[1])
            if page is None or page["_workspace"] != workspace:
                return notion_error(
                    404,
                    "object_not_found",
                    "Could not find page with ID. Make sure the relevant "
                    "pages and databases are shared with your integration.",
                )
            return Response.json(self._public(page))
        if path.startswith("/v1/blocks/") and path.endswith("/children"):
            return self._children(request, path.split("/")[3])
        return notion_error(400, "invalid_request_url", "Invalid request URL.")

    def _client_ok(self, request: Request) -> bool:
        expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        return request.headers.get("authorization") == f"Basic {expected}"

    def _authorize(self, request: Request) -> Response:
        q = request.query
        if q.get("client_id") != self.client_id or q.get("response_type") != "code":
            return Response(400, b"invalid client", {"Content-Type": "text/plain"})
        if q.get("redirect_uri", self.redirect_uri) != self.redirect_uri:
            return Response(400, b"redirect_uri does not match the integration", {"Content-Type": "text/plain"})
        code = secrets.token_urlsafe(12)
        self.codes[code] = {"workspace": self.authorize_as, "query": dict(q)}
        location = self.redirect_uri + "?" + urlencode({"code": code, "state": q.get("state", "")})
        return Response(302, b"", {"Location": location})

    def _token(self, request: Request) -> Response:
        body = request.json()
        grant = self.codes.pop(body.get("code", ""), None) if body.get("grant_type") == "authorization_code" else None
        if grant is None:
            return Response.json({"error": "invalid_grant", "error_description": "Invalid code."}, status=400)
        workspace = grant["workspace"]
        return Response.json(
            {
                "access_token": self.issue_token(workspace),
                "token_type": "bearer",
                "bot_id": str(uuid.uuid4()),
                "workspace_name": f"{workspace.title()} workspace",
                "workspace_icon": None,
                "workspace_id": str(uuid.uuid5(uuid.NAMESPACE_DNS, workspace)),
                "owner": {
                    "type": "user",
                    "user": {
                        "object": "user",
                        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, workspace)),
                        "name": "Ada Lovelace",
                        "avatar_url": None,
                        "type": "person",
                        "person": {"email": f"ada@{workspace}.example"},
                    },
                },
                "duplicated_template_id": None,
                "request_id": str(uuid.uuid4()),
            }
        )

    @staticmethod
    def _public(page: dict) -> dict:
        return {k: v for k, v in page.items() if not k.startswith("_")}

    @staticmethod
    def _page_window(
        items: list, start_cursor: str | None, page_size, *, ids: list[str]
    ) -> tuple[list, dict] | Response:
        size = max(1, min(int(page_size or 100), 100))
        start = 0
        if start_cursor:
            if start_cursor not in ids:
                return notion_error(
                    400, "validation_error", f"body failed validation: start_cursor {start_cursor} is not valid."
                )
            start = ids.index(start_cursor)
        window = items[start : start + size]
        more = start + size < len(items)
        return window, {"next_cursor": ids[start + size] if more else None, "has_more": more}

    def _search(self, request: Request, workspace: str) -> Response:
        body = request.json()
        pages = [p for p in self.pages.values() if p["_workspace"] == workspace]
        if (body.get("filter") or {}).get("value") not in (None, "page"):
            pages = []
        descending = (body.get("sort") or {}).get("direction", "descending") == "descending"
        pages.sort(key=lambda p: (p["last_edited_time"], p["id"]), reverse=descending)
        result = self._page_window(pages, body.get("start_cursor"), body.get("page_size"), ids=[p["id"] for p in pages])
        if isinstance(result, Response):
            return result
        window, cursor = result
        return Response.json(
            {
                "object": "list",
                "results": [self._public(p) for p in window],
                **cursor,
                "type": "page_or_database",
                "page_or_database": {},
            }
        )

    def _children(self, request: Request, block_id: str) -> Response:
        if block_id not in self.children and block_id not in self.pages:
            return notion_error(404, "object_not_found", f"Could not find block with ID: {block_id}.")
        blocks = self.children.get(block_id, [])
        result = self._page_window(
            blocks, request.query.get("start_cursor"), request.query.get("page_size"), ids=[b["id"] for b in blocks]
        )
        if isinstance(result, Response):
            return result
        window, cursor = result
        return Response.json({"object": "list", "results": window, **cursor, "type": "block", "block": {}})
