"""Chat memories get the kind the question rule gives them now that the memory service classifies
every chat message, from any door (memories.services.kinds): memories created through the API, a
batch, MCP or an import were never classified, and the rule itself now reads German, French,
Spanish, Japanese and Chinese questions. A "note" already stored is a choice and is kept (and
marked chosen); every other chat memory is classified by the rule once. Only rows whose kind
changes are written, a thousand at a time."""

from django.db import migrations, models
from django.utils import timezone

BATCH = 1000


def classify_chat_memories(apps, schema_editor):
    from memories.search.questions import NOTE, QUESTION, asks

    Memory = apps.get_model("memories", "Memory")
    pending = Memory.objects.filter(source="chat").order_by("pk")
    now = timezone.now()
    last = 0
    while True:
        batch = list(pending.filter(pk__gt=last).only("pk", "content", "metadata", "kind_chosen_at")[:BATCH])
        if not batch:
            return
        changed = []
        for memory in batch:
            metadata = dict(memory.metadata or {})
            kind = metadata.get("kind")
            if kind == NOTE:
                if memory.kind_chosen_at is None:
                    memory.kind_chosen_at = now
                    changed.append(memory)
                continue
            if asks(memory.content):
                metadata["kind"] = QUESTION
            else:
                metadata.pop("kind", None)
            if metadata != (memory.metadata or {}):
                memory.metadata = metadata
                changed.append(memory)
        Memory.objects.bulk_update(changed, ["metadata", "kind_chosen_at"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [("memories", "0024_consumed_files")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="kind_chosen_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(classify_chat_memories, migrations.RunPython.noop, elidable=True),
    ]
