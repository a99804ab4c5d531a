"""API tokens: their scopes and expiry dates as people type them, and creating, listing and revoking them."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from core.models import ApiToken, TokenScope
from core.schemas import MAX_BIGINT

TOKEN_PREFIX = "kyb_"
NAME_MAX = 100
_RELATIVE = re.compile(r"(\d{1,6})\s*([dwmy])", re.IGNORECASE)
_DAYS_PER = {"d": 1, "w": 7, "m": 30, "y": 365}


class TokenInputError(ValueError):
    """A token's name, scopes or expiry that cannot be used; `field` names which."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


def scopes_clean(values: Iterable[str] | str | None) -> list[str]:
    """The scopes named, in their canonical order: a list, or one string of them separated by commas or
    spaces ("read,write"). An unknown scope or none at all is a TokenInputError."""
    if values is None:
        values = []
    if isinstance(values, str):
        values = [values]
    named: list[str] = []
    for value in values:
        named.extend(part for part in re.split(r"[\s,]+", str(value).strip().lower()) if part)
    unknown = sorted({scope for scope in named if scope not in TokenScope.ALL})
    if unknown:
        raise TokenInputError(
            f"unknown scope {', '.join(repr(s[:40]) for s in unknown[:5])}: a token's scopes are "
            + " and ".join(TokenScope.ALL),
            field="scopes",
        )
    if not named:
        raise TokenInputError(f"give a token at least one scope: {' or '.join(TokenScope.ALL)}", field="scopes")
    return [scope for scope in TokenScope.ALL if scope in named]


def expiry_parse(text: str | date | None, *, now: datetime | None = None) -> datetime | None:
    """When a token given `text` as its expiry stops working: None for no expiry (empty, "never"); a date
    (YYYY-MM-DD) means through the end of that day in the server's time zone; "30d", "12w", "6m", "1y"
    count days, weeks, 30-day months or 365-day years from now. A date or time already past is refused."""
    now = now or timezone.now()
    if isinstance(text, datetime):
        raise TypeError("expiry_parse takes a date or text, not a datetime")
    if isinstance(text, date):
        return _end_of(text, now)
    text = (text or "").strip()
    if not text or text.lower() == "never":
        return None
    if match := _RELATIVE.fullmatch(text):
        count, unit = int(match.group(1)), match.group(2).lower()
        if count == 0:
            raise TokenInputError("an expiry of 0 days is already past: give 1d or more", field="expires")
        try:
            return now + timedelta(days=count * _DAYS_PER[unit])
        except OverflowError:
            raise TokenInputError(f"{text!r} is further away than any date", field="expires") from None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise TokenInputError(
            f"{text[:40]!r} is not an expiry: give a date (YYYY-MM-DD) or a period such as 30d, 12w, 6m or 1y",
            field="expires",
        ) from None
    return _end_of(day, now)


def _end_of(day: date, now: datetime) -> datetime:
    today = timezone.localdate(now)
    if day < today:
        raise TokenInputError(f"the expiry date {day.isoformat()} is in the past (today is {today})", field="expires")
    return timezone.make_aware(datetime.combine(day, time(23, 59, 59)))


def api_token_create(
    *,
    user,
    name: str = "",
    scopes: Iterable[str] | None = None,
    expires_at: datetime | None = None,
    unique_name: bool = False,
) -> tuple[ApiToken, str]:
    """Create a token for user. Returns the row and the plain token, which is not stored anywhere.

    Without `scopes` the token may do everything (read and write). With `unique_name` (the account
    page) a name must differ from those of the user's tokens that still work, so the activity trail's
    "API token 'laptop'" means one token; scripts that make a token of the same name on each run
    (benchmarks, deploy scripts calling create_api_token) are not refused."""
    name = (name or "").strip()
    if len(name) > NAME_MAX:
        raise TokenInputError(f"a token's name has at most {NAME_MAX} characters", field="name")
    scopes = scopes_clean(scopes) if scopes is not None else list(TokenScope.ALL)
    if expires_at is not None and expires_at <= timezone.now():
        raise TokenInputError("the expiry is in the past", field="expires")
    key = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        if name and unique_name:
            # Two tabs creating "laptop" at once: the user's row lock lets one of them see the other.
            get_user_model().objects.select_for_update().filter(pk=user.pk).first()
            taken = [t for t in api_token_list(user=user).filter(name=name) if t.state == "active"]
            if taken:
                raise TokenInputError(f"you already have a working token named {name!r}", field="name")
        token = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=key[:12],
            key_hash=ApiToken.hash_key(key),
            scopes=scopes,
            expires_at=expires_at,
        )
    return token, key


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    """Revoke a token at once: its next request is a 401 that says so. Revoking twice changes nothing."""
    if token.revoked_at is None:
        now = timezone.now()
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now)
        token.refresh_from_db(fields=["revoked_at"])
    return token


def api_token_list(*, user):
    """The user's tokens, newest first, revoked ones included."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-pk")


def api_token_get(*, user, token_id: int) -> ApiToken:
    """One of the user's tokens; another user's is as absent as one that never was (Http404)."""
    if not 0 < token_id <= MAX_BIGINT:
        raise Http404("No such token")
    token = api_token_list(user=user).filter(pk=token_id).first()
    if token is None:
        raise Http404("No such token")
    return token
