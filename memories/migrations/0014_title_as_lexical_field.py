# The lexical index gains each memory's title as a weighted field (BM25F), so it is rebuilt once
# here. Re-embedding existing chunks with their titles as context is `manage.py reembed`
# (resumable; not run here because it needs the model and can take long on a big database).

from django.db import migrations


def rebuild_lexical_index(apps, schema_editor):
    from memories.search import lexical

    lexical.reindex_all(by_language=False)  # the schema of this migration has no languages yet


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0013_memory_edited_at"),
    ]

    operations = [
        migrations.RunPython(rebuild_lexical_index, migrations.RunPython.noop),
    ]
