"""Who may create an account: KYBERNESIS_SIGNUP is open, invite (only the addresses or domains in
KYBERNESIS_SIGNUP_INVITES) or closed (accounts are made by an administrator)."""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
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


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request) -> bool:
        return signup_mode() != "closed"

    def clean_email(self, email: str) -> str:
        email = super().clean_email(email)
        # Only a sign-up form may be refused for a missing invitation; the message is the same for
        # every address that is not on the list, so it tells nothing about existing accounts.
        if signup_mode() == "invite" and not is_invited(email):
            raise ValidationError("Sign-up on this server is by invitation; this email address has not been invited.")
        return email
