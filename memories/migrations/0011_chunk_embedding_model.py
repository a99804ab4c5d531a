"""Each chunk records the model that embedded it and a key of (model with backend, text embedded)."""

from django.db import migrations, models


def _existing_chunks_are_the_configured_model(apps, schema_editor):
    # Every vector stored so far came from the configured weights through sentence-transformers
    # (torch); their key is unknown (empty), so `manage.py reembed` recomputes them.
    from memories.embedding import model_name

    MemoryChunk = apps.get_model("memories", "MemoryChunk")
    MemoryChunk.objects.filter(embedding_model="").update(embedding_model=model_name())


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0010_apitoken_to_core_and_graph_state_out"),
    ]

    operations = [
        migrations.AddField(
            model_name="memorychunk",
            name="embedding_model",
            field=models.CharField(db_default="", default="", max_length=100),
        ),
        migrations.AddField(
            model_name="memorychunk",
            name="embedding_key",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        migrations.RunPython(_existing_chunks_are_the_configured_model, migrations.RunPython.noop),
    ]
