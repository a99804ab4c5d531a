"""What the entry points (manage.py, WSGI, ASGI, the test session) do once before Django starts:
create the data directory, keep a generated secret key in it unless KYBERNESIS_SECRET_KEY is set,
and start (or join) the embedded PostgreSQL.

Settings only read the environment, so importing them has no side effects; this is where the few
writes and the start-up happen, explicitly. The processes a command forks (django-q2's workers, the
extraction pool) inherit the started server; the test session leaves the start to the first
connection (the kybernesis.embedded engine does it then).
"""

from __future__ import annotations

import secrets

from django.core.exceptions import ImproperlyConfigured


def prepare(*, start_database: bool = True) -> None:
    from django.conf import settings

    settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
    settings.STATIC_ROOT.mkdir(parents=True, exist_ok=True)
    try:
        settings.SECRET_KEY  # noqa: B018 - set by KYBERNESIS_SECRET_KEY, or by a settings module (tests)
    except ImproperlyConfigured:
        settings.SECRET_KEY = data_dir_secret_key(settings.DATA_DIR)
    if start_database:
        start_embedded_database()


def data_dir_secret_key(data_dir) -> str:
    """A random key generated once and kept (owner-readable only) in the data directory."""
    key_file = data_dir / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


def start_embedded_database() -> None:
    """Start or join the embedded server now, in this process, so that it is this process (and not
    one of the children it forks, whose exit hooks never run) that stops it on exit."""
    from django.db import connections

    connection = connections["default"]
    if hasattr(connection, "ensure_server"):  # the embedded engine; DATABASE_URL needs nothing
        connection.ensure_server()
