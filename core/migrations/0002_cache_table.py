"""The database cache's table (django.core.cache.backends.db): rate limits, login lockouts and API
throttles are shared by every web process through it when no Redis is configured."""

from django.conf import settings
from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    if any(cache["BACKEND"].endswith("DatabaseCache") for cache in settings.CACHES.values()):
        call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("core", "0001_api_token_moved_from_memories")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
