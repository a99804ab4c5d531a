"""Reads every app shares: finding a user the way a person names one on the command line."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q


def user_find(*, name: str):
    """The user a command-line argument means: a username, an email (any case) or a numeric id;
    the oldest account wins when several match. None when nobody does."""
    name = (name or "").strip()
    if not name:
        return None
    match = Q(username=name) | Q(email__iexact=name)
    if name.isdigit() and len(name) < 19:
        match |= Q(pk=int(name))
    return get_user_model().objects.filter(match).order_by("pk").first()
