"""API rate limits (django-ninja throttling) on the shared cache, with rates read from settings on
every request, so they can be changed (or turned off with an empty rate) without a restart of the
router wiring. Over the limit, ninja answers 429 with a Retry-After header."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja.throttling import SimpleRateThrottle


class SettingsRateThrottle(SimpleRateThrottle):
    """A sliding-window limit whose rate ("120/m", "5000/h"; empty: no limit) is the named setting."""

    setting = ""

    def __init__(self):
        super().__init__(rate="1/s")  # replaced by the setting's rate on each request

    def allow_request(self, request: HttpRequest) -> bool:
        rate = getattr(settings, self.setting, "")
        if not rate:
            return True
        self.num_requests, self.duration = self.parse_rate(rate)
        return super().allow_request(request)


class AccountRateThrottle(SettingsRateThrottle):
    """Requests per account (bearer token or session), whichever way the account signed in."""

    scope = "account"
    setting = "KYBERNESIS_API_RATE"

    def get_cache_key(self, request: HttpRequest) -> str | None:
        account = getattr(request, "auth", None)
        if getattr(account, "pk", None) is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": account.pk}


class AddressRateThrottle(SettingsRateThrottle):
    """Requests per client address, signed in or not: a cap on one machine, and on token guessing."""

    scope = "address"
    setting = "KYBERNESIS_API_ADDRESS_RATE"

    def get_cache_key(self, request: HttpRequest) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def api_throttles() -> list[SimpleRateThrottle]:
    return [AccountRateThrottle(), AddressRateThrottle()]
