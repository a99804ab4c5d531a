"""NinjaAPI wiring: authentication, error shapes, and one router per app."""

from __future__ import annotations

import math

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest
from ninja import NinjaAPI
from ninja.errors import HttpError, Throttled
from ninja.parser import Parser

from connectors.api import router as connectors_router
from core.api import router as tokens_router
from core.auth import BearerTokenAuth, ScopeMissing, TokenRefused, scope_declared, session_auth
from core.text import MAX_JSON_DEPTH, TextError, check_json
from core.throttling import api_throttles, refusal
from graph.api import router as graph_router
from graph.selectors import GraphQueryError
from kybernesis.docs import VendoredSwagger
from kybernesis.unavailable import UNAVAILABLE_ERRORS, unavailable_response
from memories.api import router as memories_router
from memories.search import SearchError
from memories.services import MemoryInputError
from portability.api import router as portability_router
from sleep.api import router as sleep_router


class BodyNotJSON(ValueError):
    pass


class BodyTooLarge(ValueError):
    pass


class BodyRefused(ValueError):
    def __init__(self, error: TextError):
        self.field = error.field
        super().__init__(str(error))


class StrictJSONParser(Parser):
    """JSON bodies: too large is a 413, not JSON or too deeply nested is a 422 that says why, and a
    string no database can hold (NUL, lone surrogates) is a 422 naming where it is."""

    def parse_body(self, request: HttpRequest):
        try:
            data = super().parse_body(request)
        except RequestDataTooBig as exc:
            raise BodyTooLarge(str(exc)) from exc
        except RecursionError as exc:
            raise BodyNotJSON(f"it is nested more than {MAX_JSON_DEPTH} levels deep") from exc
        except ValueError as exc:
            raise BodyNotJSON(str(exc)) from exc
        try:
            return check_json(data)
        except TextError as exc:
            raise BodyRefused(exc) from exc


api = NinjaAPI(
    title="Kybernesis API",
    version="1",
    description="Memories, hybrid search, the knowledge graph and the sleep agent, as JSON.",
    urls_namespace="api",
    auth=[BearerTokenAuth(), session_auth],
    parser=StrictJSONParser(),
    docs_url="/docs",
    throttle=api_throttles(),
    docs=VendoredSwagger(),
)
# Every operation of every router, including ones added later, learns the token scope it needs here
# (core.auth: a GET reads, anything else writes unless it says it only reads).
api.add_decorator(scope_declared, mode="view")


@api.exception_handler(TokenRefused)
def token_refused(request: HttpRequest, exc: TokenRefused):
    response = api.create_response(request, {"detail": exc.reason}, status=401)
    response["WWW-Authenticate"] = f'Bearer realm="kybernesis", error="invalid_token", error_description="{exc.reason}"'
    return response


@api.exception_handler(ScopeMissing)
def scope_missing(request: HttpRequest, exc: ScopeMissing):
    response = api.create_response(request, {"detail": str(exc)}, status=403)
    response["WWW-Authenticate"] = f'Bearer realm="kybernesis", error="insufficient_scope", scope="{exc.scope}"'
    return response


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError):
    if isinstance(exc.__cause__, BodyTooLarge):
        return api.create_response(
            request,
            {"detail": f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes"},
            status=413,
        )
    if isinstance(exc.__cause__, BodyRefused):
        body = {"detail": f"The request body was refused: {exc.__cause__}"}
        if exc.__cause__.field:
            body["field"] = exc.__cause__.field
        return api.create_response(request, body, status=422)
    if isinstance(exc.__cause__, BodyNotJSON):
        return api.create_response(
            request, {"detail": f"The request body is not valid JSON: {exc.__cause__}"}, status=422
        )
    if isinstance(exc, Throttled):
        return _throttled(request, exc)
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


def _throttled(request: HttpRequest, exc: Throttled):
    wait = math.ceil(exc.wait) if exc.wait else None
    detail = exc.message
    if detail == Throttled(wait=None).message:  # ninja's own wording: a rate limit (core.throttling)
        detail = refusal(wait)
    response = api.create_response(request, {"detail": detail}, status=429)
    if wait:
        response["Retry-After"] = str(wait)
    return response


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404):
    # Another owner's memory is as absent as a deleted one: the answer names the path, never whose it is.
    reason = str(exc).rstrip(".") or "Not found"
    return api.create_response(request, {"detail": f"{reason}: {request.path}"}, status=404)


@api.exception_handler(RequestDataTooBig)
def body_too_large(request: HttpRequest, exc: RequestDataTooBig):
    # Raised when ninja first reads request.body, before any parser sees it.
    return api.create_response(
        request,
        {"detail": f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes"},
        status=413,
    )


@api.exception_handler(SearchError)
def search_error(request: HttpRequest, exc: SearchError):
    return api.create_response(request, {"detail": str(exc)}, status=422)


@api.exception_handler(GraphQueryError)
def graph_query_error(request: HttpRequest, exc: GraphQueryError):
    return api.create_response(request, {"detail": str(exc)}, status=422)


@api.exception_handler(MemoryInputError)
def memory_input_error(request: HttpRequest, exc: MemoryInputError):
    body = {"detail": str(exc)}
    if exc.field:
        body["field"] = exc.field
    if exc.index is not None:
        body["index"] = exc.index
    return api.create_response(request, body, status=exc.status)


@api.exception_handler(UNAVAILABLE_ERRORS[0])
@api.exception_handler(UNAVAILABLE_ERRORS[1])
def database_unavailable(request: HttpRequest, exc: Exception):
    return unavailable_response(request, exc)


api.add_router("/", memories_router)
api.add_router("/", connectors_router)
api.add_router("/", sleep_router)
api.add_router("/", graph_router)
api.add_router("/", portability_router)
api.add_router("/", tokens_router)
