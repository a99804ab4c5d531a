from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0009_graph_extracted_hash"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="edited_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
