import django.contrib.postgres.fields
import django.core.validators
import django.db.models.deletion
import pghistory.utils
import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.db import migrations, models


# Memories stored before history was kept get their current state as version 1, so each of them has a
# version to list and to restore from the first edit on.
BACKFILL_VERSIONS = """
INSERT INTO memories_memoryversion (
    pgh_created_at, pgh_label, pgh_context, pgh_obj_id, version, title, content, manual_tags, auto_tags,
    summary, priority, pinned, metadata, preview, summarized_hash, content_hash
)
SELECT updated_at, 'created', '{"kind": "system", "label": "before history was kept"}'::jsonb, id, version,
       title, content, manual_tags, auto_tags, summary, priority, pinned, metadata, preview, summarized_hash,
       content_hash
FROM memories_memory
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0027_import_keys_and_job_notices"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Activity",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("memory_title", models.CharField(blank=True, default="", max_length=500)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("created", "Created"),
                            ("edited", "Edited"),
                            ("tagged", "Tagged"),
                            ("pinned", "Pinned"),
                            ("unpinned", "Unpinned"),
                            ("linked", "Linked"),
                            ("summarised", "Summarised"),
                            ("synced", "Synced"),
                            ("restored", "Restored a version"),
                            ("trashed", "Moved to the trash"),
                            ("untrashed", "Restored from the trash"),
                            ("purged", "Deleted forever"),
                            ("imported", "Imported"),
                        ],
                        max_length=16,
                    ),
                ),
                ("detail", models.JSONField(blank=True, default=dict)),
                ("actor_kind", models.CharField(max_length=16)),
                ("actor_label", models.CharField(blank=True, default="", max_length=200)),
                ("actor_user_id", models.BigIntegerField(blank=True, null=True)),
                ("actor_token_id", models.BigIntegerField(blank=True, null=True)),
                ("created_at", models.DateTimeField()),
            ],
            options={
                "verbose_name_plural": "activity",
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="MemoryVersion",
            fields=[
                ("pgh_id", models.AutoField(primary_key=True, serialize=False)),
                ("pgh_created_at", models.DateTimeField(auto_now_add=True)),
                ("pgh_label", models.TextField(help_text="The event label.")),
                ("pgh_context", pghistory.utils.JSONField(null=True)),
                ("title", models.CharField(max_length=500)),
                ("content", models.TextField()),
                (
                    "manual_tags",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64), blank=True, default=list, size=None
                    ),
                ),
                ("auto_tags", models.JSONField(blank=True, default=list)),
                ("summary", models.TextField(blank=True, default="")),
                (
                    "priority",
                    models.FloatField(
                        default=0.5,
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ],
                    ),
                ),
                ("pinned", models.BooleanField(default=False)),
                ("metadata", models.JSONField(blank=True, default=dict)),
                ("version", models.PositiveIntegerField(db_default=1, default=1, editable=False)),
                ("preview", models.CharField(blank=True, default="", max_length=200)),
                ("summarized_hash", models.CharField(blank=True, default="", editable=False, max_length=64)),
                ("content_hash", models.CharField(editable=False, max_length=64)),
            ],
            options={
                "ordering": ["-version"],
            },
        ),
        migrations.AddField(
            model_name="memory",
            name="version",
            field=models.PositiveIntegerField(db_default=1, default=1, editable=False),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="memory",
            trigger=pgtrigger.compiler.Trigger(
                name="memory_version_next",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func='IF ROW(NEW."title", NEW."content", NEW."manual_tags", NEW."auto_tags", NEW."summary", NEW."priority", NEW."pinned", NEW."metadata") IS DISTINCT FROM ROW(OLD."title", OLD."content", OLD."manual_tags", OLD."auto_tags", OLD."summary", OLD."priority", OLD."pinned", OLD."metadata") THEN NEW.version := OLD.version + 1; ELSE NEW.version := OLD.version; END IF; RETURN NEW;',
                    hash="6f265eabd7d5bc4615fdade76a4e6a070dad92df",
                    operation="UPDATE",
                    pgid="pgtrigger_memory_version_next_77a85",
                    table="memories_memory",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="memory",
            trigger=pgtrigger.compiler.Trigger(
                name="memory_version_created",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func='INSERT INTO "memories_memoryversion" ("auto_tags", "content", "content_hash", "manual_tags", "metadata", "pgh_context", "pgh_created_at", "pgh_label", "pgh_obj_id", "pinned", "preview", "priority", "summarized_hash", "summary", "title", "version") VALUES (NEW."auto_tags", NEW."content", NEW."content_hash", NEW."manual_tags", NEW."metadata", COALESCE(NULLIF(CURRENT_SETTING(\'pghistory.context_metadata\', TRUE), \'\'), NULL)::JSONB, NOW(), \'created\', NEW."id", NEW."pinned", NEW."preview", NEW."priority", NEW."summarized_hash", NEW."summary", NEW."title", NEW."version"); RETURN NULL;',
                    hash="c85a6da0bce3023e5593070817295665918f4851",
                    operation="INSERT",
                    pgid="pgtrigger_memory_version_created_a171b",
                    table="memories_memory",
                    when="AFTER",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="memory",
            trigger=pgtrigger.compiler.Trigger(
                name="memory_version_changed",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition='WHEN (OLD."version" IS DISTINCT FROM (NEW."version"))',
                    func='INSERT INTO "memories_memoryversion" ("auto_tags", "content", "content_hash", "manual_tags", "metadata", "pgh_context", "pgh_created_at", "pgh_label", "pgh_obj_id", "pinned", "preview", "priority", "summarized_hash", "summary", "title", "version") VALUES (NEW."auto_tags", NEW."content", NEW."content_hash", NEW."manual_tags", NEW."metadata", COALESCE(NULLIF(CURRENT_SETTING(\'pghistory.context_metadata\', TRUE), \'\'), NULL)::JSONB, NOW(), \'changed\', NEW."id", NEW."pinned", NEW."preview", NEW."priority", NEW."summarized_hash", NEW."summary", NEW."title", NEW."version"); RETURN NULL;',
                    hash="1787717677fc2dd1944a0fda42a96d40d944b6c8",
                    operation="UPDATE",
                    pgid="pgtrigger_memory_version_changed_499bc",
                    table="memories_memory",
                    when="AFTER",
                ),
            ),
        ),
        migrations.AddField(
            model_name="activity",
            name="memory",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="activity",
                to="memories.memory",
            ),
        ),
        migrations.AddField(
            model_name="activity",
            name="owner",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="memoryversion",
            name="pgh_obj",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="versions", to="memories.memory"
            ),
        ),
        migrations.AddIndex(
            model_name="activity",
            index=models.Index(fields=["owner", "-created_at", "-id"], name="activity_owner_created"),
        ),
        migrations.AddIndex(
            model_name="activity",
            index=models.Index(fields=["memory", "-created_at", "-id"], name="activity_memory_created"),
        ),
        migrations.AddConstraint(
            model_name="activity",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "kind__in",
                        [
                            "created",
                            "edited",
                            "tagged",
                            "pinned",
                            "unpinned",
                            "linked",
                            "summarised",
                            "synced",
                            "restored",
                            "trashed",
                            "untrashed",
                            "purged",
                            "imported",
                        ],
                    )
                ),
                name="activity_kind_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="memoryversion",
            constraint=models.UniqueConstraint(fields=("pgh_obj", "version"), name="memoryversion_memory_version"),
        ),
        migrations.RunSQL(BACKFILL_VERSIONS, reverse_sql=migrations.RunSQL.noop),
    ]
