"""The lexical index reads each chunk in its own language and CJK runs as character pairs
(memories.search.lexical): the owners whose chunks are in a language with a Snowball config, or who
hold CJK text in a chunk or a title, are indexed again. An English-only owner's index stays as it is."""

from django.db import migrations
from django.contrib.postgres.fields import ArrayField
from django.db import models


def reindex_owners_with_other_languages(apps, schema_editor):
    from memories.search import lexical

    languages = sorted({*lexical.SNOWBALL, "nb", "nn"})
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT owner_id FROM memories_memorychunk WHERE language = ANY(%s) OR text ~ %s "
            "UNION SELECT DISTINCT owner_id FROM memories_memory WHERE title ~ %s",
            [languages, lexical.CJK_CLASS, lexical.CJK_CLASS],
        )
        owners = [row[0] for row in cursor.fetchall()]
    for owner_id in owners:
        lexical.reindex_owner(owner_id)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0031_chunk_vectors_covering_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="corpusstat",
            name="languages",
            field=ArrayField(base_field=models.CharField(max_length=8), blank=True, default=list, size=None),
        ),
        migrations.RunPython(reindex_owners_with_other_languages, migrations.RunPython.noop),
    ]
