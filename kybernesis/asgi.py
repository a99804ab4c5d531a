"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from kybernesis.boot import prepare

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kybernesis.settings")
prepare()
application = get_asgi_application()
