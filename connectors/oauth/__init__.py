"""allauth providers for Google and Notion whose endpoints follow the KYBERNESIS_*_URL settings."""

from __future__ import annotations

from django.conf import settings


def google_authorize_url() -> str:
    return settings.KYBERNESIS_GOOGLE_ACCOUNTS_URL.rstrip("/") + "/o/oauth2/v2/auth"


def google_token_url() -> str:
    return settings.KYBERNESIS_GOOGLE_OAUTH_URL.rstrip("/") + "/token"


def google_revoke_url() -> str:
    return settings.KYBERNESIS_GOOGLE_OAUTH_URL.rstrip("/") + "/revoke"


def google_userinfo_url() -> str:
    return settings.KYBERNESIS_GOOGLE_API_URL.rstrip("/") + "/oauth2/v2/userinfo"


def notion_url(path: str) -> str:
    return settings.KYBERNESIS_NOTION_API_URL.rstrip("/") + path
