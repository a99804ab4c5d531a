"""Template filters for times relative to now."""

from __future__ import annotations

from datetime import timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def ago(value) -> str:
    """ "just now" for the last minute (Django's timesince says "0 minutes"), else "3 minutes ago"."""
    if not value:
        return ""
    if timezone.now() - value < timedelta(minutes=1):
        return "just now"
    return f"{timesince(value)} ago"
