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
    redirect_uri: str = ""
    steps: tuple[str, ...] = ()

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
        options.append(
            ProviderOption(
                provider=provider.value,
                name=provider.label,
                social_provider=social,
                social_name=social.capitalize(),
                env_prefix=f"KYBERNESIS_{social.upper()}",
                configured=bool(adapter.list_apps(request, provider=social)),
                redirect_uri=request.build_absolute_uri(reverse(f"{social}_callback")),
                steps=SETUP_STEPS.get(social, ()),
            )
        )
    return options


# Three steps per provider; the page adds the exact redirect URI for this host and the admin link.
SETUP_STEPS = {
    "google": (
        (
            "In the Google Cloud console (console.cloud.google.com), open APIs & Services, enable the Google Drive "
            "API, and under Credentials create an OAuth client ID of type “Web application”."
        ),
        "Add the redirect URI shown below under “Authorized redirect URIs” and save.",
        (
            "Copy the client ID and secret into KYBERNESIS_GOOGLE_CLIENT_ID and KYBERNESIS_GOOGLE_CLIENT_SECRET and "
            "restart Kybernesis, or add a Google social application with them in the admin."
        ),
    ),
    "notion": (
        (
            "At notion.so/profile/integrations create a new public integration (OAuth) with the “Read content” "
            "capability."
        ),
        "Add the redirect URI shown below to the integration's OAuth redirect URIs and save.",
        (
            "Copy the OAuth client ID and secret into KYBERNESIS_NOTION_CLIENT_ID and KYBERNESIS_NOTION_CLIENT_SECRET and "
            "restart Kybernesis, or add a Notion social application with them in the admin."
        ),
    ),
}
