"""An index of each owner's chunks by layer holding their vectors, for exact search by an index-only
scan; it replaces the two indexes that led with the owner. Built concurrently first, so an install
with many chunks keeps taking writes and searches while it is made."""

import django.db.models.deletion
from django.conf import settings
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0030_chat_kind_says_more_than_asks"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="memorychunk",
            index=models.Index(
                fields=["owner", "tier", "embedding_model"],
                include=("id", "embedding"),
                name="memorychunk_owner_vectors",
            ),
        ),
        RemoveIndexConcurrently(model_name="memorychunk", name="memorychunk_owner_tier"),
        migrations.AlterField(
            model_name="memorychunk",
            name="owner",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
