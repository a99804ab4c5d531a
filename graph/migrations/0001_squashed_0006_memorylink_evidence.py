"""graph 0001-0006 in one step.

Squashed by hand: MemoryLink is created with 0005's reason choices and 0006's evidence column,
Entity with 0003's partial index instead of 0002's GIN index, and the columns keep the order the
old chain gave them.

0004 used to copy memories_memory.graph_extracted_hash into graph_memoryextraction and ran before
memories 0010 dropped that column. This squash cannot say `run_before` memories 0010: memories'
squashes replace 0010, and the graph would then have a cycle (graph 0001 needs memories 0006,
memories 0010 needs graph 0004). It does not need to: on any database where Django picks this
squash no graph migration ran yet, so nothing can have written a graph_extracted_hash, and the
copy only runs while the column exists.

The replaced files stay until every install has migrated past 0006: Django applies them instead
of this one on a database that has run some but not all of them.
"""

import django.contrib.postgres.fields
import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _copy_extraction_hashes(apps, schema_editor):
    """As 0004, while memories_memory still has the column (memories 0010 drops it)."""
    with schema_editor.connection.cursor() as cursor:
        columns = schema_editor.connection.introspection.get_table_description(cursor, "memories_memory")
        if any(column.name == "graph_extracted_hash" for column in columns):
            cursor.execute(
                "INSERT INTO graph_memoryextraction (memory_id, content_hash, extracted_at) "
                "SELECT id, graph_extracted_hash, now() FROM memories_memory WHERE graph_extracted_hash <> ''"
            )


class Migration(migrations.Migration):
    replaces = [
        ("graph", "0001_memory_links"),
        ("graph", "0002_entities_relationships"),
        ("graph", "0003_entity_aliased_partial_index"),
        ("graph", "0004_memory_extraction"),
        ("graph", "0005_linked_in_note_reason"),
        ("graph", "0006_memorylink_evidence"),
    ]

    initial = True

    dependencies = [
        ("memories", "0001_squashed_0009_graph_extracted_hash"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # 0001, with 0005's choices and 0006's column
        migrations.CreateModel(
            name="MemoryLink",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "reason",
                    models.CharField(
                        choices=[
                            ("shared_entities", "Shared entities"),
                            ("shared_tags", "Shared tags"),
                            ("semantic", "Semantic similarity"),
                            ("linked_in_note", "Linked in note"),
                        ],
                        max_length=24,
                    ),
                ),
                (
                    "score",
                    models.FloatField(
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ]
                    ),
                ),
                (
                    "confidence",
                    models.FloatField(
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ]
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_reinforced_at", models.DateTimeField()),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "source",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="links_out", to="memories.memory"
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="links_in", to="memories.memory"
                    ),
                ),
                # 0006
                ("evidence", models.CharField(blank=True, default="", max_length=300)),
            ],
            options={
                "ordering": ["-score", "id"],
                "indexes": [
                    models.Index(fields=["target"], name="memorylink_target"),
                    models.Index(fields=["owner", "last_reinforced_at"], name="memorylink_owner_reinforced"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("source", "target", "reason"), name="memorylink_pair_reason_unique"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("source__lt", models.F("target"))), name="memorylink_ordered_pair"
                    ),
                ],
            },
        ),
        # 0002, with 0003's index
        migrations.CreateModel(
            name="Entity",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=200)),
                ("key", models.CharField(max_length=200)),
                (
                    "aliases",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=200), blank=True, default=list, size=None
                    ),
                ),
                (
                    "type",
                    models.CharField(
                        choices=[
                            ("person", "Person"),
                            ("organization", "Organization"),
                            ("location", "Location"),
                            ("concept", "Concept"),
                            ("technology", "Technology"),
                            ("product", "Product"),
                            ("event", "Event"),
                            ("work", "Work (titles, laws)"),
                            ("group", "Group (nationalities, religious or political groups)"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "salience",
                    models.FloatField(
                        default=0.0,
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ],
                    ),
                ),
                ("mention_count", models.PositiveIntegerField(default=0)),
                ("memory_count", models.PositiveIntegerField(default=0)),
                ("first_seen", models.DateTimeField()),
                ("last_seen", models.DateTimeField()),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "entities",
                "ordering": ["-salience", "name", "id"],
            },
        ),
        migrations.CreateModel(
            name="EntityMention",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("start", models.PositiveIntegerField()),
                ("end", models.PositiveIntegerField()),
                (
                    "type",
                    models.CharField(
                        choices=[
                            ("person", "Person"),
                            ("organization", "Organization"),
                            ("location", "Location"),
                            ("concept", "Concept"),
                            ("technology", "Technology"),
                            ("product", "Product"),
                            ("event", "Event"),
                            ("work", "Work (titles, laws)"),
                            ("group", "Group (nationalities, religious or political groups)"),
                        ],
                        max_length=16,
                    ),
                ),
                ("surface", models.CharField(max_length=200)),
                (
                    "chunk",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="entity_mentions",
                        to="memories.memorychunk",
                    ),
                ),
                (
                    "entity",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="mentions",
                        to="graph.entity",
                    ),
                ),
                (
                    "memory",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="entity_mentions",
                        to="memories.memory",
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
                "ordering": ["chunk_id", "start"],
            },
        ),
        migrations.CreateModel(
            name="Relationship",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "relation_type",
                    models.CharField(
                        choices=[
                            ("works_with", "works with"),
                            ("part_of", "part of"),
                            ("located_in", "located in"),
                            ("uses", "uses"),
                            ("created", "created"),
                            ("member_of", "member of"),
                            ("leads", "leads"),
                            ("related_to", "related to"),
                        ],
                        max_length=24,
                    ),
                ),
                (
                    "weight",
                    models.FloatField(
                        default=0.0,
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ],
                    ),
                ),
                (
                    "confidence",
                    models.FloatField(
                        default=0.0,
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ],
                    ),
                ),
                ("evidence_count", models.PositiveIntegerField(default=0)),
                ("evidence", models.TextField(blank=True, default="")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_seen", models.DateTimeField()),
                (
                    "context_chunk",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="memories.memorychunk",
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "source",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="relationships_out",
                        to="graph.entity",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="relationships_in", to="graph.entity"
                    ),
                ),
            ],
            options={
                "ordering": ["-weight", "id"],
            },
        ),
        migrations.CreateModel(
            name="RelationshipEvidence",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "confidence",
                    models.FloatField(
                        validators=[
                            django.core.validators.MinValueValidator(0.0),
                            django.core.validators.MaxValueValidator(1.0),
                        ]
                    ),
                ),
                ("sentence", models.TextField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "chunk",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="memories.memorychunk",
                    ),
                ),
                (
                    "memory",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="memories.memory"
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
                (
                    "relationship",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="evidence_rows",
                        to="graph.relationship",
                    ),
                ),
            ],
        ),
        migrations.AddIndex(
            model_name="entity",
            index=models.Index(fields=["owner", "-salience"], name="entity_owner_salience"),
        ),
        # 0003: a partial index of aliased entities instead of 0002's GIN index on aliases
        migrations.AddIndex(
            model_name="entity",
            index=models.Index(
                condition=models.Q(("aliases", []), _negated=True), fields=["owner"], name="entity_owner_aliased"
            ),
        ),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.UniqueConstraint(fields=("owner", "key"), name="entity_owner_key_unique"),
        ),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "type__in",
                        [
                            "person",
                            "organization",
                            "location",
                            "concept",
                            "technology",
                            "product",
                            "event",
                            "work",
                            "group",
                        ],
                    )
                ),
                name="entity_type_valid",
            ),
        ),
        migrations.AddIndex(
            model_name="entitymention",
            index=models.Index(fields=["entity", "memory"], name="entitymention_entity_memory"),
        ),
        migrations.AddConstraint(
            model_name="entitymention",
            constraint=models.UniqueConstraint(
                fields=("chunk", "start", "entity"), name="entitymention_chunk_start_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="entitymention",
            constraint=models.CheckConstraint(
                condition=models.Q(("end__gt", models.F("start"))), name="entitymention_span"
            ),
        ),
        migrations.AddIndex(
            model_name="relationship",
            index=models.Index(fields=["owner", "-weight"], name="relationship_owner_weight"),
        ),
        migrations.AddConstraint(
            model_name="relationship",
            constraint=models.UniqueConstraint(
                fields=("source", "target", "relation_type"), name="relationship_edge_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="relationship",
            constraint=models.CheckConstraint(
                condition=models.Q(("source", models.F("target")), _negated=True), name="relationship_no_loop"
            ),
        ),
        migrations.AddConstraint(
            model_name="relationship",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "relation_type__in",
                        ["works_with", "part_of", "located_in", "uses", "created", "member_of", "leads", "related_to"],
                    )
                ),
                name="relationship_type_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="relationshipevidence",
            constraint=models.UniqueConstraint(
                fields=("relationship", "chunk"), name="relationshipevidence_chunk_unique"
            ),
        ),
        # 0004
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
        migrations.RunPython(_copy_extraction_hashes, migrations.RunPython.noop, elidable=True),
    ]
