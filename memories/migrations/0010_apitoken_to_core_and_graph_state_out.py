# ApiToken now belongs to core (same table); the graph keeps its own extraction bookkeeping
# (graph.MemoryExtraction, which copied graph_extracted_hash before this ran).

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0009_graph_extracted_hash"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
        migrations.RemoveField(model_name="memory", name="graph_extracted_hash"),
    ]
