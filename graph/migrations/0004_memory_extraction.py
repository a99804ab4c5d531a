# The graph's record of which content each memory's entities were extracted from, moved out of
# memories_memory.graph_extracted_hash (copied here before memories drops that column).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0003_entity_aliased_partial_index"),
        ("memories", "0009_graph_extracted_hash"),
    ]
    run_before = [
        ("memories", "0010_apitoken_to_core_and_graph_state_out"),
    ]

    operations = [
        migrations.CreateModel(
            name="MemoryExtraction",
            fields=[
                (
                    "memory",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="graph_extraction",
                        serialize=False,
                        to="memories.memory",
                    ),
                ),
                ("content_hash", models.CharField(max_length=64)),
                ("extracted_at", models.DateTimeField()),
            ],
        ),
        migrations.RunSQL(
            "INSERT INTO graph_memoryextraction (memory_id, content_hash, extracted_at) "
            "SELECT id, graph_extracted_hash, now() FROM memories_memory WHERE graph_extracted_hash <> ''",
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
