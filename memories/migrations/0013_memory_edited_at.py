from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0012_import_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="edited_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
