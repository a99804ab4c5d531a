"""Issue an API token for a user; the token is printed on the last line and never stored in plain."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from core.auth import api_token_create
from core.models import TokenScope
from core.selectors import user_find
from core.tokens import TokenInputError, expiry_parse, scopes_clean


class Command(BaseCommand):
    help = (
        "Create an API token for a user (by username or email) and print it on the last line. "
        "Without --scope it may read and write; --scope read makes a read-only token."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="The user's username or email address.")
        parser.add_argument(
            "--create-user", action="store_true", help="Create the user (with no usable password) if it does not exist."
        )
        parser.add_argument("--name", default="", help="A label to recognise the token by.")
        parser.add_argument(
            "--scope",
            action="append",
            dest="scopes",
            metavar="SCOPE",
            help=f"What the token may do: {' or '.join(TokenScope.ALL)}; repeat it or give a comma list "
            "(read,write). Default: read and write.",
        )
        parser.add_argument(
            "--expires",
            default="",
            help="When it stops working: a date (YYYY-MM-DD, through the end of that day) or a period from "
            "now (30d, 12w, 6m, 1y). Default: never.",
        )

    def handle(self, *args, username: str, create_user: bool, name: str, scopes, expires: str, **options):
        # Everything the token is given is checked before a user is created for it.
        try:
            scopes = scopes_clean(scopes) if scopes is not None else list(TokenScope.ALL)
            expires_at = expiry_parse(expires)
        except TokenInputError as exc:
            raise CommandError(f"--{exc.field[:-1] if exc.field == 'scopes' else exc.field}: {exc}") from None
        try:
            with transaction.atomic():  # a name already taken leaves no user created for nothing
                token, key = self._create(username, create_user, name=name, scopes=scopes, expires_at=expires_at)
        except TokenInputError as exc:
            raise CommandError(f"--{exc.field}: {exc}") from None
        user = token.user
        until = f"until {timezone.localtime(token.expires_at):%Y-%m-%d %H:%M %Z}" if token.expires_at else "no expiry"
        self.stderr.write(
            f"token for {user.get_username()!r} (scopes: {', '.join(token.scopes)}; {until}); "
            "it is shown only this once:"
        )
        self.stdout.write(key)

    def _create(self, username: str, create_user: bool, **fields):
        user = user_find(username)
        if user is None:
            if not create_user:
                raise CommandError(f"no user {username!r}; pass --create-user to create one")
            email = username if "@" in username else ""
            user = get_user_model().objects.create_user(username=username, email=email)
            user.set_unusable_password()
            user.save(update_fields=["password"])
            self.stderr.write(f"created user {username!r}")
        return api_token_create(user=user, **fields)
