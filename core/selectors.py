"""Shared reads: finding a user the way the management commands name one."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q


def user_find(identifier: str, *, by_id: bool = False):
    """The user whose username is `identifier`, or whose email is (case-insensitively); with
    `by_id`, a number may also be the user's id. None when there is no such user. Should several
    match (one's username is another's email), the oldest account is the one meant."""
    identifier = (identifier or "").strip()
    if not identifier:
        return None
    match = Q(username=identifier) | Q(email__iexact=identifier)
    if by_id and identifier.isdigit() and len(identifier) < 19:  # a bigint has at most 19 digits
        match |= Q(pk=int(identifier))
    return get_user_model().objects.filter(match).order_by("pk").first()
