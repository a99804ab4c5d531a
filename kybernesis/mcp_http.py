"""POST /mcp: the MCP Streamable HTTP transport (stateless, JSON responses) as a plain Django view.

The official SDK's transport is an ASGI app. Stateless JSON mode needs nothing that outlives one
request (no session, no open stream), so each request is handed to a fresh stateless session manager
inside asgiref's async_to_sync: the WSGI worker thread waits while the event loop answers, and the
tools' Django code runs back on this same thread (see kybernesis.mcp_server._db). That works the same
under gunicorn's gthread workers, runserver and pytest-django's live_server.
"""

from __future__ import annotations

import json
import re

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from core import throttling
from core.auth import TokenRefused, TooManyWrongTokens, api_token_authenticate
from core.text import TextError, check_json
from kybernesis.mcp_server import acting_as, arguments_refused, server

_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection"}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _error(status: int, message: str, *, headers: dict | None = None) -> HttpResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600 if status != 401 else -32001, "message": message}}
    return HttpResponse(json.dumps(body), status=status, content_type="application/json", headers=headers)


def _bearer_token(request: HttpRequest):
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return api_token_authenticate(request, key.strip())


def _scope(request: HttpRequest) -> dict:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()]
    server_name, _, port = request.get_host().partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "server": (server_name, int(port) if port.isdigit() else (443 if request.is_secure() else 80)),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


def _without_lone_surrogates(body: bytes) -> tuple[bytes, str | None]:
    """The body the SDK can parse, and why its arguments are refused. JSON's \\u escapes can carry a lone
    surrogate (\\ud800), which no text can hold; the SDK's parser refuses the whole message for it, a
    transport error that names nothing. The API answers such a field with a 422 naming it, so here each
    lone surrogate becomes U+FFFD, to be parsed, and the refusal names the argument, which the tool then
    answers as its error. Only a body with a \\ud escape is looked at twice."""
    if b"\\ud" not in body.lower():
        return body, None
    try:
        message = json.loads(body)
        if not _holds_lone_surrogate(message):
            return body, None  # a surrogate pair (an escaped emoji) is fine
    except (ValueError, RecursionError):
        return body, None  # the SDK's own parse error says what is wrong
    params = message.get("params") if isinstance(message, dict) else None
    arguments = params.get("arguments") if isinstance(params, dict) and "arguments" in params else params
    try:
        check_json(arguments)
        refusal = "the request contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode"
    except TextError as exc:
        refusal = str(exc)
    return json.dumps(_replace_lone_surrogates(message)).encode(), refusal


def _holds_lone_surrogate(value) -> bool:
    if isinstance(value, str):
        return bool(_LONE_SURROGATE.search(value))
    if isinstance(value, dict):
        return any(_holds_lone_surrogate(k) or _holds_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_lone_surrogate(v) for v in value)
    return False


def _replace_lone_surrogates(value):
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_lone_surrogates(k): _replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_lone_surrogates(v) for v in value]
    return value


async def _answer(scope: dict, body: bytes, token, refusal: str | None = None) -> tuple[int, list, bytes]:
    sent = False
    status, headers, chunks = 500, [], []

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message):
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    with acting_as(token.user, token), arguments_refused(refusal):
        # The body was read within Django's own limit (DATA_UPLOAD_MAX_MEMORY_SIZE, as for the API), so
        # the SDK's smaller default (4 MB) must not refuse a memory_add the API would take.
        manager = StreamableHTTPSessionManager(
            app=server._lowlevel_server,
            stateless=True,
            json_response=True,
            max_request_body_size=max(len(body), settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0, 1),
        )
        async with manager.run():
            await manager.handle_request(scope, receive, send)
    return status, headers, b"".join(chunks)


@csrf_exempt
@login_not_required
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    # The same limits as the JSON API: wrong tokens per address, requests per account and address.
    try:
        token = _bearer_token(request)
    except TooManyWrongTokens as exc:
        return _error(429, exc.message, headers={"Retry-After": str(exc.wait)})
    except TokenRefused as exc:
        header = f'Bearer realm="kybernesis", error="invalid_token", error_description="{exc.reason}"'
        return _error(401, exc.reason, headers={"WWW-Authenticate": header})
    if token is not None and (wait := throttling.hit(throttling.request_limits(request, token.user))) is not None:
        return _error(429, throttling.refusal(wait), headers={"Retry-After": str(wait)})
    if token is None:
        return _error(
            401,
            "Authorization: Bearer <API token> is required (create one with manage.py create_api_token)",
            headers={"WWW-Authenticate": 'Bearer realm="kybernesis"'},
        )
    if request.method != "POST":
        # Stateless: no stream for a GET to open and no session for a DELETE to end; the specification
        # has a server without them answer 405.
        return _error(
            405, "this MCP endpoint is stateless: send each JSON-RPC message as a POST", headers={"Allow": "POST"}
        )
    try:
        body = request.body
    except RequestDataTooBig:
        return _error(413, "the request body is too large")
    body, refusal = _without_lone_surrogates(body)
    status, headers, content = async_to_sync(_answer)(_scope(request), body, token, refusal)
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in headers}
    if status >= 400 and not headers.get("content-type", "").startswith("application/json"):
        # The SDK answers a few refusals (a wrong Content-Type) as plain text; a client reads JSON-RPC.
        return _error(status, content.decode("utf-8", "replace").strip() or f"HTTP {status}")
    response = HttpResponse(content, status=status)
    for name, value in headers.items():
        if name not in _HOP_BY_HOP:
            response[name] = value
    return response
