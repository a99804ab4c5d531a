"""memories 0010-0015 in one step.

Unlike 0001-0009 this one also upgrades databases with rows: a database that ran 0009 (and graph's
0004, which copies graph_extracted_hash before it is dropped here) and none of 0010-0015 gets this
migration, so the three data migrations stay, in their old order. Each is a no-op on an empty
database and is marked elidable, so a later squash may drop it.

The replaced files stay until every install has migrated past 0015: Django applies them instead
of this one on a database that has run some but not all of them. A migration that depends on
0015 is pointed at this squash by Django when the squash is used.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _existing_chunks_are_the_configured_model(apps, schema_editor):
    # As 0011: every vector stored so far came from the configured weights through
    # sentence-transformers (torch); their key is unknown (empty), so `manage.py reembed` recomputes them.
    from memories.embedding import model_name

    MemoryChunk = apps.get_model("memories", "MemoryChunk")
    MemoryChunk.objects.filter(embedding_model="").update(embedding_model=model_name())


def _rebuild_lexical_index(apps, schema_editor):
    # As 0014: the lexical index gains each memory's title as a weighted field (BM25F).
    from memories.search import lexical

    lexical.reindex_all(by_language=False)  # the schema of this migration has no languages yet


def _reset_accesses(apps, schema_editor):
    # As 0015: searches used to count as accesses, and no log tells the real opens apart.
    Memory = apps.get_model("memories", "Memory")
    Memory.objects.exclude(access_count=0, last_accessed_at__isnull=True).update(access_count=0, last_accessed_at=None)


class Migration(migrations.Migration):
    replaces = [
        ("memories", "0010_apitoken_to_core_and_graph_state_out"),
        ("memories", "0011_chunk_embedding_model"),
        ("memories", "0012_import_jobs"),
        ("memories", "0013_memory_edited_at"),
        ("memories", "0014_title_as_lexical_field"),
        ("memories", "0015_reset_accesses_counted_by_search"),
    ]

    dependencies = [
        ("memories", "0001_squashed_0009_graph_extracted_hash"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # 0010: ApiToken now belongs to core (same table); graph keeps its own extraction record.
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
        migrations.RemoveField(model_name="memory", name="graph_extracted_hash"),
        # 0011
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
        migrations.RunPython(_existing_chunks_are_the_configured_model, migrations.RunPython.noop, elidable=True),
        # 0012
        migrations.CreateModel(
            name="ImportJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("filename", models.CharField(max_length=255)),
                ("path", models.CharField(blank=True, default="", max_length=500)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("running", "Running"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("error", models.TextField(blank=True, default="")),
                ("total", models.PositiveIntegerField(blank=True, null=True)),
                ("processed", models.PositiveIntegerField(default=0)),
                ("created", models.PositiveIntegerField(default=0)),
                ("duplicates", models.PositiveIntegerField(default=0)),
                ("failed", models.PositiveIntegerField(default=0)),
                ("errors", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="import_jobs",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        # 0013
        migrations.AddField(
            model_name="memory",
            name="edited_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        # 0014
        migrations.RunPython(_rebuild_lexical_index, migrations.RunPython.noop, elidable=True),
        # 0015
        migrations.RunPython(_reset_accesses, migrations.RunPython.noop, elidable=True),
    ]
