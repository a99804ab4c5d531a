"""What the entry points (manage.py, WSGI, ASGI, the test plugin) do once before Django starts:
create the data directory and, unless KYBERNESIS_SECRET_KEY is set, keep a generated secret key in it.

Settings only read the environment, so importing them has no side effects; this is where the few
writes the project needs at start-up happen, explicitly. The embedded database starts later still,
on the first connection (kybernesis.embedded).
"""

from __future__ import annotations

import secrets

from django.core.exceptions import ImproperlyConfigured


def prepare() -> None:
    from django.conf import settings

    settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
    settings.STATIC_ROOT.mkdir(parents=True, exist_ok=True)
    try:
        settings.SECRET_KEY  # noqa: B018 - set by KYBERNESIS_SECRET_KEY, or by a settings module (tests)
    except ImproperlyConfigured:
        settings.SECRET_KEY = data_dir_secret_key(settings.DATA_DIR)


def data_dir_secret_key(data_dir) -> str:
    """A random key generated once and kept (owner-readable only) in the data directory."""
    key_file = data_dir / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()
