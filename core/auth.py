"""API tokens: creating them, and bearer authentication for the JSON API."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import Throttled
from ninja.security import HttpBearer, SessionAuth

from core import throttling
from core.models import ApiToken

TOKEN_PREFIX = "kyb_"
_TOKEN_LAST_USED_RESOLUTION = timedelta(minutes=1)


def api_token_create(*, user, name: str = "") -> tuple[ApiToken, str]:
    """Create a token for user. Returns the row and the plain token, which is not stored anywhere."""
    key = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name[:100], prefix=key[:12], key_hash=ApiToken.hash_key(key))
    return token, key


class TooManyWrongTokens(Throttled):
    """A 429 for an address that presented too many wrong tokens lately."""

    def __init__(self, wait: int):
        super().__init__(wait=wait)
        self.message = f"Too many wrong API tokens from this address; try again in {wait} s"


def api_token_user_for(request: HttpRequest, key: str):
    """The user of a bearer token presented with this request, or None. An address that presented
    too many wrong tokens lately (KYBERNESIS_API_AUTH_FAILURE_RATE) is refused with Throttled
    (429, Retry-After) whatever token it sends now, so tokens cannot be guessed at speed."""
    wait = throttling.auth_failure_wait(request)
    if wait is not None:
        raise TooManyWrongTokens(wait)
    user = api_token_user(key)
    if user is None:
        throttling.auth_failure_record(request)
    return user


def api_token_user(key: str):
    """The active user a token belongs to, or None."""
    if not key or len(key) > 200:
        return None
    token = ApiToken.objects.select_related("user").filter(key_hash=ApiToken.hash_key(key)).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _TOKEN_LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


class BearerTokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        user = api_token_user_for(request, token)
        if user is not None:
            request.user = user
        return user


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
