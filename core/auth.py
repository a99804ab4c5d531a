"""Bearer authentication for the JSON API and MCP: which token is presented, whether it still works, and
whether its scopes allow the operation asked for.

The rule for scopes covers every operation of every router without each endpoint saying anything: a
GET (or HEAD) needs `read`, anything else needs `write`. An endpoint that reads although it is a POST
(search, which takes its query as a body) says so with `@token_scope("read")`. Session (browser)
requests are not scoped: a person signed in may do everything their account may.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError, Throttled
from ninja.security import HttpBearer, SessionAuth

from core import throttling
from core.actors import Actor, set_actor
from core.models import ApiToken, RateCounter, TokenScope
from core.tokens import TOKEN_PREFIX, api_token_create

__all__ = [
    "ANY_SCOPE",
    "TOKEN_PREFIX",
    "BearerTokenAuth",
    "ScopeMissing",
    "TokenRefused",
    "api_token_authenticate",
    "api_token_create",
    "api_token_find",
    "operation_scope",
    "scope_declared",
    "session_auth",
    "token_scope",
]

_TOKEN_LAST_USED_RESOLUTION = timedelta(minutes=1)
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
# Any working token may call an operation declared with this (GET /tokens/me: what may I do?).
ANY_SCOPE = "any"


class TooManyWrongTokens(Throttled):
    """A 429 for an address that presented too many wrong tokens lately."""

    def __init__(self, wait: int):
        super().__init__(wait=wait)
        self.message = f"Too many wrong API tokens from this address; try again in {wait} s"


class TokenRefused(HttpError):
    """A 401 for a real token that no longer works (expired, revoked), saying which and since when."""

    def __init__(self, reason: str):
        super().__init__(401, reason)
        self.reason = reason


class ScopeMissing(HttpError):
    """A 403 for a working token without the scope the operation needs."""

    def __init__(self, token: ApiToken, scope: str, what: str):
        self.scope = scope
        has = ", ".join(token.scopes) or "none"
        super().__init__(403, f"this API token lacks the '{scope}' scope that {what} needs (its scopes: {has})")


def api_token_authenticate(request: HttpRequest, key: str) -> ApiToken | None:
    """The working token presented with this request, or None for a wrong one. An address that
    presented too many wrong tokens lately (KYBERNESIS_API_AUTH_FAILURE_RATE) is refused with Throttled
    (429, Retry-After) whatever token it sends now, so tokens cannot be guessed at speed. A real token
    that expired or was revoked is a TokenRefused: it is no guess, so it is not counted as one."""
    token = api_token_find(key, failure_key=throttling.auth_failure_key(request))
    if token is None:
        if (wait := throttling.auth_failure_wait(request)) is not None:
            raise TooManyWrongTokens(wait)
        throttling.auth_failure_record(request)
    return token


def api_token_find(key: str, *, failure_key: str | None = None) -> ApiToken | None:
    """The token with this key, its user loaded, or None when there is none or its user is inactive.
    A token that expired or was revoked raises TokenRefused with the reason.

    With `failure_key` (core.throttling.auth_failure_key) the same statement reads that address's count
    of wrong tokens, so the request that presents a real token makes one round trip, not two; an address
    over its limit is refused (TooManyWrongTokens) before anything about the token is said."""
    if not key or len(key) > 200:
        return None
    found = _token_row(ApiToken.hash_key(key), failure_key or "")
    if found is None:
        return None
    token, counts = found
    if not token.user.is_active:
        return None
    if failure_key is not None and (wait := throttling.auth_failure_wait(None, counts=counts)) is not None:
        raise TooManyWrongTokens(wait)
    now = timezone.now()
    if (reason := token.refusal(now)) is not None:
        raise TokenRefused(reason)
    if token.last_used_at is None or now - token.last_used_at > _TOKEN_LAST_USED_RESOLUTION:
        # At most one write a minute per token; the condition keeps concurrent requests of the same
        # minute from queueing on the row's lock, and the row is only read back by the account page.
        ApiToken.objects.filter(pk=token.pk, last_used_at=token.last_used_at).update(last_used_at=now)
        token.last_used_at = now
    return token


def _token_row(key_hash: str, failure_key: str) -> tuple[ApiToken, tuple | None] | None:
    """The token, its user and the wrong-token counter of `failure_key`, in one statement.

    Every API request runs this, so the statement is written once (from the models' fields) and the
    rows become model instances directly: building the equivalent queryset, with select_related and
    the counter as subqueries, cost more CPU than the search's own SQL did."""
    sql, token_fields, user_fields = _token_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, [failure_key, key_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(token_fields)
    token = ApiToken.from_db(connection.alias, token_fields, row[:split])
    user = get_user_model().from_db(connection.alias, user_fields, row[split : split + len(user_fields)])
    token.user = user
    slot, count, previous = row[split + len(user_fields) :]
    return token, None if slot is None else (slot, count, previous)


@functools.cache
def _token_sql() -> tuple[str, list[str], list[str]]:
    user_model = get_user_model()
    quote = connection.ops.quote_name

    def column(field) -> str:
        return quote(str(field.column))

    token_fields = [f.attname for f in ApiToken._meta.concrete_fields]
    user_fields = [f.attname for f in user_model._meta.concrete_fields]
    columns = [f"t.{column(f)}" for f in ApiToken._meta.concrete_fields]
    columns += [f"u.{column(f)}" for f in user_model._meta.concrete_fields]
    sql = (
        f"SELECT {', '.join(columns)}, rc.slot, rc.count, rc.previous "
        f"FROM {quote(ApiToken._meta.db_table)} t "
        f"JOIN {quote(user_model._meta.db_table)} u "
        f"ON u.{column(user_model._meta.pk)} = t.{column(ApiToken._meta.get_field('user'))} "
        f"LEFT JOIN {quote(RateCounter._meta.db_table)} rc ON rc.key = %s "
        f"WHERE t.{column(ApiToken._meta.get_field('key_hash'))} = %s"
    )
    return sql, token_fields, user_fields


# --- Which scope an operation needs -------------------------------------------------------------


def token_scope(scope: str) -> Callable:
    """Declare the scope an API operation needs, where the method alone would say otherwise: a POST that
    only reads is `@token_scope("read")`. `ANY_SCOPE` lets any working token call it."""
    if scope not in (*TokenScope.ALL, ANY_SCOPE):
        raise ImproperlyConfigured(f"token_scope({scope!r}): a scope is one of {', '.join(TokenScope.ALL)}")

    def declare(view_func):
        view_func.token_scope = scope
        return view_func

    return declare


def operation_scope(methods, view_func) -> str:
    """The scope an operation needs: its declaration, else `read` for GET and HEAD and `write` for
    everything else, so an endpoint nobody thought about is a write."""
    declared = getattr(view_func, "token_scope", None)
    if declared is not None:
        return declared
    return TokenScope.READ if set(methods) <= _READ_METHODS else TokenScope.WRITE


def scope_declared(run):
    """A ninja "view" decorator for the whole API (api.add_decorator): it wraps each operation's run,
    before authentication, and tells BearerTokenAuth the scope this operation declared, if it did (one
    that did not is decided by each request's method). It also writes the scope into the operation's
    OpenAPI entry (x-token-scope, a 403 response) and its description."""
    operation = getattr(inspect.unwrap(run), "__self__", None)
    if operation is None or not hasattr(operation, "view_func"):
        raise ImproperlyConfigured("scope_declared must wrap a ninja Operation.run; add it first")
    declared = getattr(operation.view_func, "token_scope", None)
    _document(operation)

    if inspect.iscoroutinefunction(run):

        @functools.wraps(run)
        async def guarded_async(request, *args, **kwargs):
            request.token_scope_needed = declared
            return await run(request, *args, **kwargs)

        return guarded_async

    @functools.wraps(run)
    def guarded(request, *args, **kwargs):
        request.token_scope_needed = declared
        return run(request, *args, **kwargs)

    return guarded


def _document(operation) -> None:
    scopes = {operation_scope([method], operation.view_func) for method in operation.methods}
    if len(scopes) != 1:  # one operation for GET and POST: each method has its own scope, one entry has one
        operation.description = ((operation.description or "").rstrip() + _MIXED).strip()
        return
    scope = scopes.pop()
    extra = {**(operation.openapi_extra or {}), "x-token-scope": scope}
    if scope != ANY_SCOPE:
        refused = {"description": f"The bearer token lacks the `{scope}` scope", "content": _ERROR_CONTENT}
        extra["responses"] = {**extra.get("responses", {}), "403": refused}
    operation.openapi_extra = extra
    needs = "any working token" if scope == ANY_SCOPE else f"a token with the `{scope}` scope"
    operation.description = (
        (operation.description or "").rstrip() + f"\n\nWith a bearer token: needs {needs}."
    ).strip()


_MIXED = "\n\nWith a bearer token: GET needs the `read` scope, every other method `write`."


def _scope_needed(request: HttpRequest) -> str:
    declared = getattr(request, "token_scope_needed", None)
    if declared is not None:
        return declared
    # An operation the decorator never saw: decided by the method, a write unless it is a GET.
    return TokenScope.READ if request.method in _READ_METHODS else TokenScope.WRITE


class BearerTokenAuth(HttpBearer):
    """A bearer token: it must work (401 with the reason when it expired or was revoked) and hold the
    scope the operation needs (403 naming it). A token that passes becomes who is acting (core.actors)
    and stays on the request as `request.api_token`."""

    def authenticate(self, request: HttpRequest, token: str):
        api_token = api_token_authenticate(request, token)
        if api_token is None:
            return None
        scope = _scope_needed(request)
        if scope != ANY_SCOPE and not api_token.allows(scope):
            # A refused request never reaches the API's throttle, so it is counted here: a read-only
            # token sending writes in a loop meets the account's and the address's limits all the same.
            if (wait := throttling.hit(throttling.request_limits(request, api_token.user))) is not None:
                raise Throttled(wait=wait)
            raise ScopeMissing(api_token, scope, f"{request.method} {request.path}")
        request.user = api_token.user
        request.api_token = api_token  # type: ignore[attr-defined]
        set_actor(Actor.api_token(api_token))  # ActorMiddleware resets it when the response is made
        return api_token.user


class SessionAuthAfterBearer(SessionAuth):
    """The browser session, consulted only when no Authorization header was sent.

    A request that carries a bearer token is decided by that token alone: an invalid one is a 401,
    never a CSRF 403 from falling through to the session check. Without a signed-in session there
    is nothing for CSRF to protect, so that too is a 401 rather than a 403.
    """

    def __call__(self, request: HttpRequest):
        if request.headers.get("Authorization") is not None:
            return None
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        return super().__call__(request)


session_auth = SessionAuthAfterBearer()
