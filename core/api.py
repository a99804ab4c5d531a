"""The tokens router: what the API token presenting a request may do (GET /tokens/me)."""

from __future__ import annotations

from datetime import datetime

from django.http import Http404, HttpRequest
from ninja import Router

from core.auth import ANY_SCOPE, token_scope
from core.schemas import ErrorOut, OutSchema

router = Router(tags=["tokens"], by_alias=True)


class TokenOut(OutSchema):
    id: int
    name: str
    prefix: str
    scopes: list[str]
    expires_at: datetime | None
    created_at: datetime
    last_used_at: datetime | None


@router.get(
    "/tokens/me",
    response={200: TokenOut, 401: ErrorOut, 404: ErrorOut},
    summary="The API token of this request",
)
@token_scope(ANY_SCOPE)
def token_me(request: HttpRequest):
    """The token this request was made with: its name, scopes and expiry, so an integration can tell
    what it may do before it tries. Any working token may ask, whatever its scopes. A request signed in
    by a browser session has no token (404)."""
    token = getattr(request, "api_token", None)
    if token is None:
        raise Http404("This request was not made with an API token")
    return token
