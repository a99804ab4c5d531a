"""The Content-Security-Policy middleware (django-csp), with the OAuth providers' origins added to
form-action from the current settings: the connect forms post to allauth, which redirects to the
provider's consent page, and a browser applies form-action to that redirect too."""

from __future__ import annotations

from urllib.parse import urlsplit

from csp.middleware import CSPMiddleware as BaseCSPMiddleware
from django.conf import settings


def oauth_origins() -> list[str]:
    origins = set()
    for url in (settings.KYBERNESIS_GOOGLE_ACCOUNTS_URL, settings.KYBERNESIS_NOTION_API_URL):
        parts = urlsplit(url or "")
        if parts.scheme and parts.netloc:
            origins.add(f"{parts.scheme}://{parts.netloc}")
    return sorted(origins)


class CSPMiddleware(BaseCSPMiddleware):
    def get_policy_parts(self, request, response, report_only: bool = False):
        parts = super().get_policy_parts(request, response, report_only)
        if not report_only:
            parts.update = {**(parts.update or {}), "form-action": oauth_origins()}
        return parts
