"""400 with the reason, for the requests Django refuses before any view runs.

A multipart body that cannot be parsed, more fields or files than the limits, a Host header the
server does not answer to: Django answers each with a bare "Bad Request" (and the API's JSON would
say only that), which tells a client nothing to fix. Here the API answers `{"detail": reason}` and a page a
short page with the same reason. Nothing here touches the database or the request's host, either of
which may be what was refused.
"""

from __future__ import annotations

import html
import logging

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError

logger = logging.getLogger(__name__)

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bad request - Kybernesis</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2933}}
h1{{font-size:1.4rem}}</style></head>
<body><main><h1>This request could not be read</h1>
<p>{reason}</p><p><a href="/">Go to the start page</a></p></main></body></html>
"""


def reason_for(exception: BaseException | None) -> str:
    """What was wrong with the request, in words a client can act on."""
    if isinstance(exception, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return f"The request has more than {limit:,} fields (form fields or query parameters); send fewer."
    if isinstance(exception, TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return f"The request has more than {limit:,} files; send fewer at a time."
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return f"The request body is over {limit:,} bytes (KYBERNESIS_MAX_REQUEST_BYTES)."
    if isinstance(exception, MultiPartParserError):
        return f"The multipart/form-data body could not be read: {exception}."
    if isinstance(exception, DisallowedHost):
        return "The Host header names a host this server does not answer to (see KYBERNESIS_ALLOWED_HOSTS)."
    text = str(exception or "").strip()
    return f"Bad request: {text}." if text else "Bad request."


def handler400(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    reason = reason_for(exception)
    logger.info("400 for %s %s: %s", request.method, request.path, reason)
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": reason}, status=400)
    return HttpResponse(_PAGE.format(reason=html.escape(reason)), status=400)
