"""`manage.py mcp_stdio --user U`: the MCP server over stdin/stdout, for clients that only launch a command."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q


class Command(BaseCommand):
    help = (
        "Serve the MCP tools over stdio as one user (the same tools as /mcp). stdout carries the protocol, "
        "so logs go to stderr (as the LOGGING setting already sends them)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="The username or email address the tools act as.")

    def handle(self, *args, user: str, **options):
        from kybernesis.mcp_server import acting_as, server

        User = get_user_model()
        account = User.objects.filter(Q(username=user) | Q(email__iexact=user)).order_by("pk").first()
        if account is None or not account.is_active:
            raise CommandError(f"no active user {user!r}")
        self.stderr.write(f"MCP over stdio as {account.get_username()!r}")
        with acting_as(account):
            server.run("stdio")
