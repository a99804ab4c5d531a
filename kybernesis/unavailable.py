"""503 with Retry-After, never 500, when the database cannot serve a request right now.

A saturated connection pool (no connection free within KYBERNESIS_DB_POOL_TIMEOUT), a PostgreSQL
that refuses connections ("too many clients already", a restart) or a server gone away all surface
as django.db.OperationalError or InterfaceError. Those are conditions to retry, not bugs: the API
answers JSON, pages a short page, both with Retry-After. Nothing here touches the database (it is
the thing that failed), so the page is rendered without the request's user or session.
"""

from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import engines
from django.views.defaults import server_error

logger = logging.getLogger(__name__)

UNAVAILABLE_ERRORS = (OperationalError, InterfaceError)

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Busy - Kybernesis</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2933}
h1{font-size:1.4rem}</style></head>
<body><main><h1>Kybernesis is busy</h1>
<p>The server could not reach its database just now ({{ reason }}), so your request was not completed.</p>
<p>Please try again in {{ retry_after }} seconds: <a href="{{ path }}">reload</a>.</p></main></body></html>
"""


def is_unavailable(exc: BaseException | None) -> bool:
    return isinstance(exc, UNAVAILABLE_ERRORS)


def _reason(exc: BaseException) -> str:
    text = str(exc).lower()
    if "pool" in text or "couldn't get a connection" in text:
        return "all database connections are busy"
    if "too many clients" in text or "remaining connection slots" in text:
        return "the database has no free connection slots"
    return "the database is unavailable"


def unavailable_response(request: HttpRequest, exc: BaseException) -> HttpResponse:
    retry_after = str(settings.KYBERNESIS_RETRY_AFTER_SECONDS)
    reason = _reason(exc)
    logger.warning("503 for %s %s: %s: %s", request.method, request.path, type(exc).__name__, exc)
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": f"Service busy: {reason}. Retry after {retry_after} s."}, status=503)
    else:
        page = engines["django"].from_string(_PAGE)
        response = HttpResponse(
            page.render({"reason": reason, "retry_after": retry_after, "path": request.get_full_path()}), status=503
        )
    response["Retry-After"] = retry_after
    response["Cache-Control"] = "no-store"
    return response


def handler500(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """Django's 500 handler runs inside the `except` of the failed request, middleware included
    (sessions and authentication query the database before any view): a database that cannot
    serve is a 503 there too."""
    exc = sys.exc_info()[1]
    if is_unavailable(exc):
        return unavailable_response(request, exc)
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Internal server error"}, status=500)
    return server_error(request, *args, **kwargs)


class DatabaseUnavailableMiddleware:
    """Answers 503 for a view that failed to reach the database (the 500 handler covers the rest)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if is_unavailable(exception):
            return unavailable_response(request, exception)
        return None
