# A chunk's BM25 weight is now computed against its owner's average chunk length including the chunks
# being indexed, and a rebuild weighs every chunk against the final average (memories.search.lexical). The
# index is rebuilt once here so that existing chunks, weighed against the prior or a partial average
# when they were indexed, get the same weights as new ones. Embeddings are unchanged.

from django.db import migrations


def rebuild_lexical_index(apps, schema_editor):
    from memories.search import lexical

    lexical.reindex_all(by_language=False)  # the schema of this migration has no languages yet


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0018_title_once_per_memory"),
    ]

    operations = [
        migrations.RunPython(rebuild_lexical_index, migrations.RunPython.noop),
    ]
