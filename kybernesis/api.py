"""NinjaAPI wiring: authentication, error shapes, and one router per app."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from ninja import NinjaAPI
from ninja.errors import HttpError
from ninja.parser import Parser
from ninja.security import HttpBearer, django_auth

from connectors.api import router as connectors_router
from sleep.api import router as sleep_router
from graph.api import router as graph_router
from graph.selectors import GraphQueryError
from kybernesis.docs import VendoredSwagger
from memories.api import router as memories_router
from memories.search import SearchError
from memories.services import MemoryInputError, api_token_user


class BodyNotJSON(ValueError):
    pass


class BodyTooLarge(ValueError):
    pass


class StrictJSONParser(Parser):
    def parse_body(self, request: HttpRequest):
        try:
            return super().parse_body(request)
        except RequestDataTooBig as exc:
            raise BodyTooLarge(str(exc)) from exc
        except ValueError as exc:
            raise BodyNotJSON(str(exc)) from exc


class BearerTokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        user = api_token_user(token)
        if user is not None:
            request.user = user
        return user


api = NinjaAPI(
    title="Kybernesis API",
    version="1",
    description="Memories, hybrid search, the knowledge graph and the sleep agent, as JSON.",
    urls_namespace="api",
    auth=[BearerTokenAuth(), django_auth],
    parser=StrictJSONParser(),
    docs_url="/docs",
    docs=VendoredSwagger(),
)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError):
    if isinstance(exc.__cause__, BodyTooLarge):
        return api.create_response(request, {"detail": "The request body is larger than "
                                             f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes"}, status=413)
    if isinstance(exc.__cause__, BodyNotJSON):
        return api.create_response(request, {"detail": f"The request body is not valid JSON: {exc.__cause__}"},
                                   status=422)
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


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


api.add_router("/", memories_router)
api.add_router("/", connectors_router)
api.add_router("/", sleep_router)
api.add_router("/", graph_router)
