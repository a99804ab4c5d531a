"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application

from kybernesis.boot import prepare

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kybernesis.settings")
prepare()
application = get_wsgi_application()
