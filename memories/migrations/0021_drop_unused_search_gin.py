"""Drop the GIN index on memorychunk.search_vector: no query reads it (BM25 search reads the postings
in memories_chunkterm), and every chunk insert paid for it, about 100 entries a chunk."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0020_chat_question_kind"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="memorychunk",
            name="memorychunk_search_gin",
        ),
    ]
