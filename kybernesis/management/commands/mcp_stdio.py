"""`manage.py mcp_stdio --token KEY` or `--user U`: the MCP server over stdin/stdout, for clients that only
launch a command."""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from core.auth import TokenRefused, api_token_find

TOKEN_VARIABLE = "KYBERNESIS_MCP_TOKEN"


class Command(BaseCommand):
    help = (
        "Serve the MCP tools over stdio (the same tools as /mcp), through an API token (its scopes apply, "
        "and a revoke or expiry ends what it may do) or as a user with the account's full rights. stdout "
        "carries the protocol, so logs go to stderr (as the LOGGING setting already sends them)."
    )

    def add_arguments(self, parser):
        who = parser.add_mutually_exclusive_group(required=False)
        who.add_argument(
            "--token",
            help=f"An API token (kyb_…); also read from the {TOKEN_VARIABLE} environment variable, which "
            "keeps it out of the process list.",
        )
        who.add_argument("--user", help="The username or email address the tools act as, with full rights.")

    def handle(self, *args, token: str | None, user: str | None, **options):
        from kybernesis.mcp_server import acting_as, server

        token = token or (None if user else os.environ.get(TOKEN_VARIABLE, "").strip() or None)
        if token:
            try:
                api_token = api_token_find(token)
            except TokenRefused as exc:
                raise CommandError(str(exc.reason)) from None
            if api_token is None:
                raise CommandError("no such API token (create one with manage.py create_api_token)")
            self.stderr.write(
                f"MCP over stdio with token {api_token.label!r} of {api_token.user.get_username()!r} "
                f"(scopes: {', '.join(api_token.scopes)})"
            )
            with acting_as(api_token.user, api_token, recheck=True):
                server.run("stdio")
            return
        if not user:
            raise CommandError(f"give --token (or {TOKEN_VARIABLE}) or --user")
        User = get_user_model()
        account = User.objects.filter(Q(username=user) | Q(email__iexact=user)).order_by("pk").first()
        if account is None or not account.is_active:
            raise CommandError(f"no active user {user!r}")
        self.stderr.write(f"MCP over stdio as {account.get_username()!r}")
        with acting_as(account):
            server.run("stdio")
