"""Until this release every search result counted as an access, so access counts and last access
times were inflated by searches. No log tells the real opens apart, so every count and last access
time is reset; from now on only opening a memory counts (memories.services.access)."""

from django.db import migrations


def reset_accesses(apps, schema_editor):
    Memory = apps.get_model("memories", "Memory")
    Memory.objects.exclude(access_count=0, last_accessed_at__isnull=True).update(access_count=0, last_accessed_at=None)


class Migration(migrations.Migration):
    dependencies = [("memories", "0014_title_as_lexical_field")]

    operations = [migrations.RunPython(reset_accesses, migrations.RunPython.noop, elidable=True)]
