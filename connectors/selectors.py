"""Reads for connectors: owner-scoped accounts and items, and which providers can be connected."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import reverse

from connectors.models import SOCIAL_PROVIDER, ConnectorAccount, ConnectorItem, Provider


def connector_list(*, user) -> QuerySet[ConnectorAccount]:
    return ConnectorAccount.objects.for_user(user).order_by("provider", "created_at", "id")


def connector_get(*, user, account_id: int) -> ConnectorAccount:
    """The user's connector, or 404 (also for another user's, which is never confirmed to exist)."""
    return get_object_or_404(connector_list(user=user), pk=account_id)


def connector_items(*, account: ConnectorAccount, status: str | None = None) -> QuerySet[ConnectorItem]:
    qs = ConnectorItem.objects.filter(account=account).order_by("status", "title", "id")
    if status:
        qs = qs.filter(status=status)
    return qs


@dataclass
class ProviderOption:
    provider: str
    name: str
    social_provider: str
    social_name: str
    env_prefix: str
    configured: bool

    @property
    def login_url(self) -> str:
        return connect_url(self.social_provider)


def connect_url(social_provider: str) -> str:
    """allauth's login view for a provider; posting process=connect to it starts the OAuth connect."""
    return reverse(f"{social_provider}_login")


def provider_options(request) -> list[ProviderOption]:
    """Each provider with whether an OAuth client is configured (env settings or a SocialApp row)."""
    from allauth.socialaccount.adapter import get_adapter

    adapter = get_adapter(request)
    options = []
    for provider in Provider:
        social = SOCIAL_PROVIDER[provider]
        options.append(ProviderOption(provider=provider.value, name=provider.label, social_provider=social,
                                      social_name=social.capitalize(), env_prefix=f"KYBERNESIS_{social.upper()}",
                                      configured=bool(adapter.list_apps(request, provider=social))))
    return options
