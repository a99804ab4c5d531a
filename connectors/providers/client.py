"""The shared HTTP client of the providers: retries with backoff (honouring Retry-After), OAuth token
use and refresh, JSON and bounded downloads."""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import requests
from django.conf import settings
from django.utils import timezone

from connectors.providers.errors import ConnectorError, ItemSkipped, MalformedResponse, ReconnectNeeded, RemoteError
from core.formatting import megabytes

logger = logging.getLogger(__name__)

RETRYABLE_STATUSES = {429, 500, 502, 503, 504}
# Refresh a token this long before it expires rather than wait for the 401.
TOKEN_EXPIRY_MARGIN = timedelta(seconds=60)
USER_AGENT = "Kybernesis-Connector/1.0"

# Waits go through this name so that tests can record them instead of sleeping.
sleep = time.sleep


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After is either seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - timezone.now()).total_seconds())


class ProviderClient:
    """An authenticated HTTP client for one connector account.

    Every request is retried on 429 and 5xx (and on network errors) with exponential backoff,
    honouring Retry-After, up to KYBERNESIS_CONNECTOR_MAX_RETRIES times. A 401 refreshes the token
    once when the provider supports refresh; a second refusal means the person must reconnect.
    """

    name = "the provider"
    social_provider = ""
    # None: KYBERNESIS_CONNECTOR_MAX_RETRIES. Calls made while a person waits (revoking) use 0.
    max_retries: int | None = None

    def __init__(self, *, account):
        self.account = account
        self.session = requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        self._token = None

    # --- tokens ---------------------------------------------------------------------------------

    def social_token(self):
        from allauth.socialaccount.models import SocialToken

        if self._token is None:
            if self.account.social_account_id is None:
                raise ReconnectNeeded(f"The {self.name} account is no longer linked. Reconnect it to sync again.")
            self._token = (
                SocialToken.objects.filter(account_id=self.account.social_account_id)
                .select_related("app")
                .order_by("-id")
                .first()
            )
            if self._token is None or not self._token.token:
                raise ReconnectNeeded(f"No {self.name} access token is stored. Reconnect to sync again.")
        return self._token

    def social_app(self):
        """The OAuth client (settings or a SocialApp row) that issued the token."""
        from allauth.socialaccount.adapter import get_adapter
        from django.core.exceptions import ImproperlyConfigured, MultipleObjectsReturned, ObjectDoesNotExist

        token = self.social_token()
        if token.app_id:
            return token.app
        try:
            return get_adapter().get_app(None, provider=self.social_provider)
        except (ImproperlyConfigured, MultipleObjectsReturned, ObjectDoesNotExist) as exc:
            raise ConnectorError(
                f"The {self.name} OAuth client is not configured, or configured twice "
                f"({type(exc).__name__}); see the documentation's Connectors page, under Setting up."
            ) from exc

    # A provider that can renew access supplies `refresh_request` and the message for a refused renewal.
    refresh_refused_message = ""

    def refresh_request(self, app, refresh_token: str) -> dict:
        """Ask the provider's token endpoint for a new access token; the JSON answer."""
        raise NotImplementedError

    def revoke(self) -> None:
        """Withdraw the stored token at the provider, when the account is disconnected."""
        raise NotImplementedError

    def can_refresh(self) -> bool:
        supported = type(self).refresh_request is not ProviderClient.refresh_request
        return supported and bool(self.social_token().token_secret)

    def refresh_token(self) -> None:
        """Renew access with the stored refresh token; a refusal (400/401) means only a reconnect helps."""
        if not self.can_refresh():
            raise ReconnectNeeded(f"{self.name} refused the stored token. Reconnect to sync again.")
        try:
            data = self.refresh_request(self.social_app(), self.social_token().token_secret)
        except RemoteError as exc:
            if exc.status in (400, 401):
                raise ReconnectNeeded(
                    self.refresh_refused_message or f"{self.name} refused to renew access. Reconnect to sync again."
                ) from exc
            raise
        self.store_refreshed_token(data)

    def store_refreshed_token(self, data: dict) -> None:
        token = self.social_token()
        access = data.get("access_token") if isinstance(data, dict) else None
        if not isinstance(access, str) or not access:
            raise MalformedResponse(f"malformed token response from {self.name} (no access_token)")
        token.token = access
        if isinstance(data.get("refresh_token"), str) and data["refresh_token"]:
            token.token_secret = data["refresh_token"]
        expires_in = data.get("expires_in")
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
            token.expires_at = timezone.now() + timedelta(seconds=int(expires_in))
        else:
            token.expires_at = None
        token.save(update_fields=["token", "token_secret", "expires_at"])

    def auth_headers(self) -> dict:
        return {"Authorization": f"Bearer {self.social_token().token}"}

    def _token_expired(self) -> bool:
        token = self.social_token()
        return token.expires_at is not None and token.expires_at <= timezone.now() + TOKEN_EXPIRY_MARGIN

    # --- HTTP ------------------------------------------------------------------------------------

    def error_message(self, response: requests.Response) -> str:
        """The remote's own words for an error response, when it sent any."""
        try:
            body = response.json()
        except ValueError:
            return (response.text or "").strip()[:200]
        return str(body)[:200]

    def is_retryable(self, response: requests.Response) -> bool:
        return response.status_code in RETRYABLE_STATUSES

    def request(
        self, method: str, url: str, *, authenticated: bool = True, headers: dict | None = None, **kwargs
    ) -> requests.Response:
        kwargs.setdefault("timeout", settings.KYBERNESIS_CONNECTOR_TIMEOUT_SECONDS)
        refreshed = False
        attempt = 0
        while True:
            sent_headers = dict(headers or {})
            if authenticated:
                if not refreshed and self.can_refresh() and self._token_expired():
                    self.refresh_token()
                    refreshed = True
                sent_headers.update(self.auth_headers())
            try:
                response = self.session.request(method, url, headers=sent_headers, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as exc:
                response, failure = None, f"could not reach {self.name} ({type(exc).__name__})"
            else:
                if response.status_code == 401 and authenticated:
                    response.close()
                    if not refreshed and self.can_refresh():
                        self.refresh_token()
                        refreshed = True
                        continue
                    raise ReconnectNeeded(
                        f"{self.name} refused the stored token (it was revoked or has "
                        "expired). Reconnect to sync again."
                    )
                failure = self._failure(response)
                if failure is None:
                    return response
            self._wait_before_retry(attempt, response, failure)
            attempt += 1

    def _failure(self, response: requests.Response) -> str | None:
        """None for a usable answer; the reason for an answer worth retrying. Any other error is raised."""
        if not self.is_retryable(response):
            if response.status_code >= 400:
                message = self.error_message(response)
                response.close()
                raise RemoteError(
                    f"{self.name} answered {response.status_code}: {message}", status=response.status_code
                )
            return None
        failure = f"{self.name} answered {response.status_code}: {self.error_message(response)}"
        response.close()
        return failure

    def _wait_before_retry(self, attempt: int, response: requests.Response | None, failure: str) -> None:
        """Back off exponentially (or as Retry-After asks), or give up when retries or patience run out."""
        status = response.status_code if response is not None else None
        if attempt >= (settings.KYBERNESIS_CONNECTOR_MAX_RETRIES if self.max_retries is None else self.max_retries):
            raise RemoteError(f"{failure}; gave up after {attempt + 1} attempts", status=status, transient=True)
        wait = retry_after_seconds(response.headers.get("Retry-After")) if response is not None else None
        if wait is None:
            base = settings.KYBERNESIS_CONNECTOR_BACKOFF_SECONDS
            wait = base * (2**attempt) * (1 + random.random() * 0.25)
        if wait > settings.KYBERNESIS_CONNECTOR_MAX_WAIT_SECONDS:
            raise RemoteError(
                f"{failure}; it asked to wait {wait:.0f} s, longer than a sync waits. "
                "The next sync continues from here.",
                status=status,
                transient=True,
            )
        logger.info("%s: %s; retrying in %.2f s", self.name, failure, wait)
        sleep(wait)

    def json(self, method: str, url: str, **kwargs):
        response = self.request(method, url, **kwargs)
        try:
            return response.json()
        except ValueError as exc:
            raise MalformedResponse(f"{self.name} sent a response that is not valid JSON") from exc

    def download(self, url: str, *, max_bytes: int, **kwargs) -> bytes:
        """Fetch a body, refusing (ItemSkipped) anything larger than max_bytes without reading it all."""
        response = self.request("GET", url, stream=True, **kwargs)
        with response:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise ItemSkipped(f"the file is {megabytes(int(declared))}; the limit is {megabytes(max_bytes)}")
            data = bytearray()
            try:
                for chunk in response.iter_content(chunk_size=256 * 1024):
                    data.extend(chunk)
                    if len(data) > max_bytes:
                        raise ItemSkipped(f"the file is over the limit of {megabytes(max_bytes)}")
            except requests.RequestException as exc:
                raise RemoteError(
                    f"the download from {self.name} broke off ({type(exc).__name__})", transient=True
                ) from exc
        return bytes(data)

    def paginate(
        self, fetch: Callable[[str | None], tuple[list, str | None]], start: str | None = None
    ) -> Iterator[tuple[list, str | None]]:
        """Yield (results, next cursor) page by page until the remote has no next cursor."""
        cursor = start
        while True:
            results, cursor = fetch(cursor)
            yield results, cursor
            if not cursor:
                return
