# Chunks record the hash of the exact text they were embedded from (title context + chunk text), and
# the lexical index gains the title as a weighted field (BM25F), so it is rebuilt once here.
# Re-embedding existing chunks with their titles is `manage.py reembed` (resumable; not run here
# because it needs the model and can take long on a big database).

from django.db import migrations, models


def rebuild_lexical_index(apps, schema_editor):
    from memories import lexical

    lexical.reindex_all()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0010_apitoken_to_core_and_graph_state_out"),
    ]

    operations = [
        migrations.AddField(
            model_name="memorychunk",
            name="embedded_hash",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        migrations.RunPython(rebuild_lexical_index, migrations.RunPython.noop),
    ]
