"""Template filters for language codes (core.language)."""

from __future__ import annotations

from django import template

from core.language import language_name as _language_name

register = template.Library()


@register.filter
def language_name(code) -> str:
    """ "German" for "de"; "" for an unknown or unread language."""
    return _language_name(code or "")
