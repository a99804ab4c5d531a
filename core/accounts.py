"""Who may create an account: KYBERNESIS_SIGNUP is open, invite (only the addresses or domains in
KYBERNESIS_SIGNUP_INVITES) or closed (accounts are made by an administrator)."""

from __future__ import annotations

from types import SimpleNamespace

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core import context as allauth_context
from django.conf import settings
from django.core.exceptions import ValidationError

SIGNUP_MODES = ("open", "invite", "closed")


def signup_mode() -> str:
    mode = (settings.KYBERNESIS_SIGNUP or "open").strip().lower()
    if mode not in SIGNUP_MODES:
        raise ValueError(f"KYBERNESIS_SIGNUP must be one of {', '.join(SIGNUP_MODES)}; got {mode!r}")
    return mode


def is_invited(email: str) -> bool:
    """An invitation names an address (ada@example.org) or a whole domain (@example.org)."""
    email = email.strip().lower()
    domain = "@" + email.rpartition("@")[2]
    invites = {entry.strip().lower() for entry in settings.KYBERNESIS_SIGNUP_INVITES if entry.strip()}
    return email in invites or domain in invites


PRODUCT_NAME = "Kybernesis"


def user_display(user) -> str:
    """How a person is named in messages ("Successfully signed in as …"): by the email address they
    signed up with, not the username allauth derived from it, which they never chose."""
    return getattr(user, "email", "") or user.get_username()


class AccountAdapter(DefaultAccountAdapter):
    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        # allauth's mails greet and sign off with the current Site ("example.com" unless someone edits
        # it in the admin); they name the product and the host the person actually uses instead.
        request = allauth_context.request
        domain = request.get_host() if request is not None else "localhost"
        super().send_mail(
            template_prefix, email, {"current_site": SimpleNamespace(name=PRODUCT_NAME, domain=domain), **context}
        )

    def is_open_for_signup(self, request) -> bool:
        return signup_mode() != "closed"

    def clean_email(self, email: str) -> str:
        email = super().clean_email(email)
        # Only a sign-up form may be refused for a missing invitation; the message is the same for
        # every address that is not on the list, so it tells nothing about existing accounts.
        if signup_mode() == "invite" and not is_invited(email):
            raise ValidationError("Sign-up on this server is by invitation; this email address has not been invited.")
        return email
