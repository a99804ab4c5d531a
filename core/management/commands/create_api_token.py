"""Issue an API token for a user; the token is printed on the last line and never stored in plain."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.auth import api_token_create
from core.selectors import user_find


class Command(BaseCommand):
    help = "Create an API token for a user (by username or email) and print it on the last line."

    def add_arguments(self, parser):
        parser.add_argument("username", help="The user's username or email address.")
        parser.add_argument(
            "--create-user", action="store_true", help="Create the user (with no usable password) if it does not exist."
        )
        parser.add_argument("--name", default="", help="A label to recognise the token by.")

    def handle(self, *args, username: str, create_user: bool, name: str, **options):
        user = user_find(username)
        if user is None:
            if not create_user:
                raise CommandError(f"no user {username!r}; pass --create-user to create one")
            email = username if "@" in username else ""
            user = get_user_model().objects.create_user(username=username, email=email)
            user.set_unusable_password()
            user.save(update_fields=["password"])
            self.stderr.write(f"created user {username!r}")
        _, key = api_token_create(user=user, name=name)
        self.stderr.write(f"token for {user.get_username()!r}; it is shown only this once:")
        self.stdout.write(key)
