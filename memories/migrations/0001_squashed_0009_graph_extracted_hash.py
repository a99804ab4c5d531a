"""memories 0001-0009 in one step, for new databases (0009 is the state graph's first migrations build on).

Squashed by hand from the files it replaces: what they churned (0001's single HNSW index, the
posting tables' foreign-key indexes dropped in 0004, the posting index rebuilt as a covering one in
0006) is created once in its final form, and each table's columns keep the order the old chain
gave them. The data migrations of 0003 (index existing chunks) and 0005 (recompute BM25 impacts)
are left out: this migration only runs on a database where none of 0001-0009 ran, so there are
no rows for them to fix.

The replaced files stay until every install has migrated past 0009: Django applies them instead
of this one on a database that has run some but not all of them. Delete them (and `replaces`)
only in a release that requires having run this squash first.
"""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.core.validators
import django.db.models.deletion
import pgvector.django.indexes
import pgvector.django.vector
from django.conf import settings
from django.db import migrations, models
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    replaces = [
        ("memories", "0001_initial"),
        ("memories", "0002_chat_sessions_and_upload_jobs"),
        ("memories", "0003_lexical_index"),
        ("memories", "0004_drop_redundant_posting_indexes"),
        ("memories", "0005_bm25_parameters"),
        ("memories", "0006_covering_posting_index"),
        ("memories", "0007_tiers_and_tag_freshness"),
        ("memories", "0008_summary_preview"),
        ("memories", "0009_graph_extracted_hash"),
    ]

    initial = True

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # pgvector must exist before any vector column; on an external server the role needs
        # permission to create it, or an administrator creates it once beforehand.
        VectorExtension(),
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(blank=True, default="", max_length=100)),
                ("prefix", models.CharField(editable=False, max_length=12)),
                ("key_hash", models.CharField(editable=False, max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
        migrations.CreateModel(
            name="Memory",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("title", models.CharField(max_length=500)),
                ("content", models.TextField()),
                ("summary", models.TextField(blank=True, default="")),
                (
                    "source",
                    models.CharField(
                        choices=[("upload", "Upload"), ("chat", "Chat"), ("connector", "Connector")],
                        default="upload",
                        max_length=16,
                    ),
                ),
                ("metadata", models.JSONField(blank=True, default=dict)),
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
                (
                    "tier",
                    models.CharField(
                        choices=[("hot", "Hot"), ("warm", "Warm"), ("archive", "Archive")], default="hot", max_length=16
                    ),
                ),
                ("pinned", models.BooleanField(default=False)),
                (
                    "decay_score",
                    models.FloatField(
                        default=0.0,
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ],
                    ),
                ),
                ("access_count", models.PositiveIntegerField(default=0)),
                ("last_accessed_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("content_hash", models.CharField(db_index=True, editable=False, max_length=64)),
                (
                    "manual_tags",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64), blank=True, default=list, size=None
                    ),
                ),
                ("auto_tags", models.JSONField(blank=True, default=list)),
                ("auto_tagged_at", models.DateTimeField(blank=True, null=True)),
                (
                    "tags",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64), blank=True, default=list, editable=False, size=None
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memories",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                # 0007
                ("auto_tagged_hash", models.CharField(blank=True, default="", editable=False, max_length=64)),
                ("tier_changed_at", models.DateTimeField(blank=True, null=True)),
                ("tier_reason", models.CharField(blank=True, default="", max_length=200)),
                # 0008
                ("preview", models.CharField(blank=True, default="", max_length=200)),
                ("summarized_hash", models.CharField(blank=True, default="", editable=False, max_length=64)),
                # 0009 (0010 drops it again once graph has copied it)
                ("graph_extracted_hash", models.CharField(blank=True, default="", editable=False, max_length=64)),
            ],
            options={
                "verbose_name_plural": "memories",
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="MemoryChunk",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("position", models.PositiveIntegerField()),
                ("text", models.TextField()),
                ("char_start", models.PositiveIntegerField()),
                ("char_end", models.PositiveIntegerField()),
                ("text_hash", models.CharField(max_length=64)),
                ("embedding", pgvector.django.vector.VectorField(dimensions=384)),
                (
                    "tier",
                    models.CharField(
                        choices=[("hot", "Hot"), ("warm", "Warm"), ("archive", "Archive")], default="hot", max_length=16
                    ),
                ),
                (
                    "search_vector",
                    models.GeneratedField(
                        db_persist=True,
                        expression=django.contrib.postgres.search.SearchVector("text", config="english"),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                    ),
                ),
                (
                    "memory",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="chunks", to="memories.memory"
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "ordering": ["memory_id", "position"],
            },
        ),
        migrations.AddIndex(
            model_name="memory",
            index=django.contrib.postgres.indexes.GinIndex(fields=["tags"], name="memory_tags_gin"),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["owner", "-created_at"], name="memory_owner_created"),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["owner", "tier"], name="memory_owner_tier"),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["owner", "source"], name="memory_owner_source"),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("priority__gte", 0), ("priority__lte", 1)), name="memory_priority_0_1"
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("tier__in", ["hot", "warm", "archive"])), name="memory_tier_valid"
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("source__in", ["upload", "chat", "connector"])), name="memory_source_valid"
            ),
        ),
        migrations.AddIndex(
            model_name="memorychunk",
            index=django.contrib.postgres.indexes.GinIndex(fields=["search_vector"], name="memorychunk_search_gin"),
        ),
        migrations.AddIndex(
            model_name="memorychunk",
            index=models.Index(fields=["owner", "tier"], name="memorychunk_owner_tier"),
        ),
        migrations.AddConstraint(
            model_name="memorychunk",
            constraint=models.UniqueConstraint(
                fields=("memory", "position"), name="memorychunk_memory_position_unique"
            ),
        ),
        # 0007: one partial HNSW index per storage layer instead of 0001's single one
        migrations.AddIndex(
            model_name="memorychunk",
            index=pgvector.django.indexes.HnswIndex(
                condition=models.Q(("tier__in", ("hot", "warm"))),
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="memorychunk_hnsw_active",
                opclasses=["vector_cosine_ops"],
            ),
        ),
        migrations.AddIndex(
            model_name="memorychunk",
            index=pgvector.django.indexes.HnswIndex(
                condition=models.Q(("tier", "archive")),
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="memorychunk_hnsw_archive",
                opclasses=["vector_cosine_ops"],
            ),
        ),
        # 0008
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["updated_at"], name="memory_updated"),
        ),
        # 0002
        migrations.CreateModel(
            name="UploadJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("filename", models.CharField(max_length=255)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("processing", "Processing"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("error", models.TextField(blank=True, default="")),
                ("text", models.TextField(blank=True, default="")),
                ("title", models.CharField(max_length=500)),
                ("metadata", models.JSONField(blank=True, default=dict)),
                (
                    "manual_tags",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64), blank=True, default=list, size=None
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "memory",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="memories.memory",
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="upload_jobs",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
        migrations.CreateModel(
            name="ChatSession",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("title", models.CharField(blank=True, default="", max_length=200)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("message_count", models.PositiveIntegerField(default=0)),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="chat_sessions",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-updated_at", "-id"],
                "indexes": [models.Index(fields=["owner", "-updated_at"], name="chatsession_owner_updated")],
            },
        ),
        # 0003, with 0004's and 0006's index changes
        migrations.CreateModel(
            name="CorpusStat",
            fields=[
                (
                    "owner",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("chunk_count", models.BigIntegerField(default=0)),
                ("total_length", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name="ChunkTerm",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("lexeme", models.TextField()),
                ("tf", models.PositiveSmallIntegerField()),
                ("impact", models.FloatField()),
                (
                    "chunk",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memories.memorychunk",
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["owner", "lexeme", "-impact"], include=("chunk",), name="chunkterm_owner_lexeme_impact"
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("chunk", "lexeme"), name="chunkterm_chunk_lexeme_unique")
                ],
            },
        ),
        migrations.CreateModel(
            name="TermStat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("lexeme", models.TextField()),
                ("df", models.IntegerField(default=0)),
                (
                    "owner",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("owner", "lexeme"), name="termstat_owner_lexeme_unique")
                ],
            },
        ),
        # 0007
        migrations.CreateModel(
            name="TierMove",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "from_tier",
                    models.CharField(choices=[("hot", "Hot"), ("warm", "Warm"), ("archive", "Archive")], max_length=16),
                ),
                (
                    "to_tier",
                    models.CharField(choices=[("hot", "Hot"), ("warm", "Warm"), ("archive", "Archive")], max_length=16),
                ),
                ("reason", models.CharField(max_length=200)),
                (
                    "cause",
                    models.CharField(
                        choices=[
                            ("sleep", "Sleep cycle"),
                            ("pin", "Pinned or unpinned"),
                            ("edit", "Edited"),
                            ("connector", "Removed at the source"),
                        ],
                        default="sleep",
                        max_length=16,
                    ),
                ),
                ("moved_at", models.DateTimeField()),
                (
                    "memory",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="tier_moves", to="memories.memory"
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "ordering": ["-moved_at", "-id"],
                "indexes": [models.Index(fields=["memory", "-moved_at"], name="tiermove_memory_moved")],
            },
        ),
    ]
