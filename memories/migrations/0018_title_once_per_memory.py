# The lexical index counts a memory's title once, with its first chunk, and not when that chunk already
# opens with the title (memories.search.lexical.TITLE_WEIGHT), so it is rebuilt once here. Embeddings are
# unchanged.

from django.db import migrations


def rebuild_lexical_index(apps, schema_editor):
    from memories.search import lexical

    lexical.reindex_all(by_language=False)  # the schema of this migration has no languages yet


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0017_originals"),
    ]

    operations = [
        migrations.RunPython(rebuild_lexical_index, migrations.RunPython.noop),
    ]
